#!/usr/bin/env python3
"""A subject with the mistake of issue 32: the payload validator also checks byte 0x0F
(arg_type, FACTS §8) as reserved. Everything else is examples/subjects/custom_op.py, whose
stream rules call this validator too (so its group divergences follow from the payload one)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "examples", "subjects"))
import custom_op  # noqa: E402

correct = custom_op.validate_payload


def validate_payload(b):
    failed = correct(b)
    if failed:
        return failed
    if b[0x0F]:  # the mistake: arg_type read as a reserved byte
        return "custom_op_payload_reserved_zero"
    return None


custom_op.validate_payload = validate_payload
custom_op.serve(validators={
    "validate_header": custom_op.validate_header,
    "validate_payload": validate_payload,
    "validate_stream": custom_op.validate_stream,
}, name="arg-type-reserved")
