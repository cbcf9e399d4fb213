//! [`Subject`] over `tpb_oracle`, the independent second reading.

use super::engine_sync_types::{
    End, EngineFinding, EngineProgram, EngineSyncAnswer, EngineSyncOutcome, Link, Resource,
    StopReason, SyncSite, WaitEdge,
};
use super::interface::{
    module_answer, stream_verdict, Capabilities, Fault, Reference, Reply, Subject,
};
use super::lint_types::{LintResult, LintRow};
use super::lowering_types::ModuleAnswer;
use super::lowering_types::{IrInstruction, Lowered, LoweredModule, LoweringRejected, Message};
use super::sync_types::{
    BandReading, SyncEntry, SyncFlow, SyncPlanned, SyncProgram, SyncRejected, SyncRun,
    SyncViolation,
};
use std::cell::RefCell;

/// The program last vetted on this thread, its script kept (with its lists' capacity) for
/// `sync_simulate`.
struct Vetted {
    ticket: u64,
    script: o::sim::Script,
    exp: Option<o::sim::Expectation>,
}

const NO_SCRIPT: o::sim::Script = o::sim::Script {
    pool: 0,
    grabs: Vec::new(),
    steps: Vec::new(),
};

thread_local! {
    static VETTED: RefCell<Vetted> = const {
        RefCell::new(Vetted {
            ticket: 0,
            script: NO_SCRIPT,
            exp: None,
        })
    };
}
use super::types::{
    BundleSpan, BundleStreamResult, DecodeFail, Decoded, EncodeResult, FieldName, IrAnswer,
    IrQuery, LutResult, LutTable, Name, Predicate, Route, StreamFail, StreamResult, StreamSummary,
    Validator, Value, Verdict,
};
use crate::generation::Generation;
use tpb_core::insn;
use tpb_core::lower::{Direction, TransferOperand};
use tpb_core::sync::{AllocFrom, Engine};
use tpb_oracle as o;

/// `tpb_oracle` as a [`Subject`] (registry name `oracle`), serving one chip (SPEC §0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OracleSubject {
    chip: o::Generation,
    /// As the oracle's lowering [`o::Ledger`] takes it.
    number: u8,
}

impl OracleSubject {
    /// An exhaustive match: a generation the oracle cannot serve must not silently run as v2
    /// (FACTS "Generations").
    pub fn new(arch: Generation) -> OracleSubject {
        let (chip, number) = match arch {
            Generation::V2 => (o::Generation::Sunda, 2),
            Generation::V3 => (o::Generation::Cayman, 3),
            Generation::V4 => (o::Generation::Mariana, 4),
            Generation::V5 => (o::Generation::Maverick, 5),
        };
        OracleSubject { chip, number }
    }
}

fn val_from(v: o::Val) -> Value {
    match v {
        o::Val::Int(n) => Value::Int(n),
        o::Val::Name(s) => Value::Name(s),
        o::Val::Bytes(b) => Value::Bytes(b),
    }
}

fn val_to(v: &Value) -> o::Val {
    match v {
        Value::Int(n) => o::Val::Int(*n),
        Value::Name(s) => o::Val::Name(s.clone()),
        Value::Bytes(b) => o::Val::Bytes(b.clone()),
    }
}

/// Both enums are in SPEC chain order (`oracle_and_harness_spell_predicates_alike`).
#[inline]
fn predicate(p: o::Predicate) -> Predicate {
    Predicate::known(p as u8).unwrap_or_else(|| Predicate::Unknown(p.name().into()))
}

/// The oracle reports bundle indices only; offsets are `64 * index` (SPEC §5.3: every
/// instruction starts on a bundle boundary).
fn lint_row(r: o::Report) -> LintRow {
    match r {
        o::Report::Instruction {
            index,
            opcode,
            length,
            lint,
        } => {
            let (verdict, failure) = match lint {
                o::Lint::Valid => ("valid", None),
                o::Lint::NotModelled => ("skeleton", None),
                o::Lint::Invalid { predicate, offset } => ("invalid", Some((predicate, offset))),
            };
            LintRow::Instruction {
                index,
                offset: 64 * index,
                opcode,
                length,
                verdict,
                failure,
            }
        }
        o::Report::Fault {
            name,
            index,
            owner,
            owner_opcode,
        } => LintRow::StreamError {
            name,
            index,
            offset: 64 * index,
            owner: (owner, 64 * owner, owner_opcode),
        },
    }
}

fn gate(r: Result<(), o::GateRejection>) -> IrAnswer {
    IrAnswer::Gate(r.map_err(|e| Name::Known(e.name())))
}

impl Subject for OracleSubject {
    fn name(&self) -> &str {
        "oracle"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::all()
    }

    #[inline]
    fn validate(&self, v: Validator, b: &[u8; 64]) -> Reply<Verdict> {
        let r = match v {
            Validator::Header => o::header_verdict(b, self.chip),
            Validator::Payload => o::payload_verdict(b, self.chip),
        };
        Ok(r.err().map(|r| predicate(r.predicate)))
    }

    fn decode(&self, b: &[u8; 64]) -> Reply<Result<Decoded, DecodeFail>> {
        Ok(match o::decode(b, self.chip) {
            Ok(d) => Ok(Decoded {
                opcode: d.opcode,
                mnemonic: d.mnemonic.into(),
                fields: d
                    .fields
                    .into_iter()
                    .map(|(n, v)| (n.into(), val_from(v)))
                    .collect(),
            }),
            Err(e) => Err(DecodeFail {
                field: Name::Known(e.field()),
                offset: e.offset(),
            }),
        })
    }

    fn encode(&self, opcode: u8, fields: &[(FieldName, Value)]) -> Reply<EncodeResult> {
        let f: Vec<(&str, o::Val)> = fields.iter().map(|(n, v)| (&**n, val_to(v))).collect();
        Ok(o::encode(opcode, &f, self.chip).map_err(|e| Name::Known(e.field())))
    }

    #[inline]
    fn lut(&self, table: LutTable, n: u32) -> Reply<LutResult> {
        Ok(table.oracle(n).map_err(Name::Known))
    }

    fn validate_stream(&self, bytes: &[u8]) -> Reply<Result<(), StreamFail>> {
        stream_verdict(self, bytes)
    }

    fn lower_module(&self, insns: &[IrInstruction]) -> Reply<ModuleAnswer> {
        module_answer(self, insns)
    }
}

impl Reference for OracleSubject {
    fn parse_stream(&self, bytes: &[u8]) -> Reply<StreamResult> {
        Ok(match o::parse_stream(bytes, self.chip) {
            Ok(items) => Ok(items
                .into_iter()
                .map(|it| match it {
                    o::Item::Group {
                        header_index,
                        n_args,
                    } => StreamSummary::Group {
                        header_index,
                        n_args,
                    },
                    o::Item::Other { index, opcode } => StreamSummary::Other { index, opcode },
                })
                .collect()),
            Err(e) => Err(StreamFail::at(e.name(), e.index(), bytes.len())),
        })
    }

    fn parse_bundle_stream(&self, bytes: &[u8]) -> Reply<BundleStreamResult> {
        Ok(match o::parse_bundle_stream(bytes, self.chip) {
            Ok(spans) => Ok(spans
                .into_iter()
                .map(|s| BundleSpan {
                    start: s.start,
                    count: s.count,
                    what: s.what,
                })
                .collect()),
            Err(e) => Err(StreamFail::at(e.name(), e.index(), bytes.len())),
        })
    }

    fn engine_sync(&self, p: &EngineProgram) -> Reply<EngineSyncAnswer> {
        let answer = || {
            let dmas: Vec<o::engines::Descriptor> = p
                .dma
                .iter()
                .map(|d| o::engines::Descriptor {
                    semaphore: d.sem,
                    amount: d.by,
                    after: d.trigger.map(|(e, i)| (usize::from(e), i as usize)),
                })
                .collect();
            let v = o::engines::engine_sync(&p.engines, &dmas)?;
            let end = |&(k, i): &o::engines::Ending| match (k, i as u32) {
                ("finished", 0) => Ok(End::Finished),
                ("blocked", index) => Ok(End::Blocked { index }),
                ("stopped", index) => Ok(End::Stopped { index }),
                _ => Err("oracle_unknown_end"),
            };
            Ok(EngineSyncOutcome {
                findings: v
                    .observations
                    .iter()
                    .map(observation)
                    .collect::<Result<_, _>>()?,
                ends: v.endings.iter().map(end).collect::<Result<_, _>>()?,
                semaphores: v
                    .semaphores
                    .iter()
                    .map(|&s| value(s))
                    .collect::<Result<_, _>>()?,
                links: v
                    .satisfied
                    .iter()
                    .map(|&(w, by)| Link {
                        wait: place(w),
                        by: by.map(place),
                    })
                    .collect(),
                executed: 0,
            })
        };
        Ok(answer())
    }

    fn lint_stream(&self, bytes: &[u8]) -> Reply<LintResult> {
        Ok(o::lint_stream(bytes, self.chip)
            .map(|reports| reports.into_iter().map(lint_row).collect())
            .map_err(|e| format!("{e:?}")))
    }

    fn ir(&self, q: &IrQuery) -> Reply<IrAnswer> {
        Ok(match q {
            IrQuery::CheckCustomOp {
                args,
                outputs,
                arch,
            } => gate(o::gate_custom_op(args, outputs, *arch)),
            IrQuery::SbScratchpad(q) => gate(o::gate_sb_scratchpad(
                q.kind,
                q.subkind,
                q.sb_arg_global,
                q.n_args,
                q.n_outputs,
                q.n_scratch,
            )),
            IrQuery::CcDim(d) => gate(o::gate_cc_dim(*d)),
            IrQuery::RankIdOutput(k) => gate(o::gate_rank_id_output(*k)),
            IrQuery::Lnc(n) => gate(o::gate_lnc(*n)),
            IrQuery::Route(n) => IrAnswer::Route(if o::route_is_sb2sb(*n) {
                Route::Sb2sb
            } else {
                Route::Dma
            }),
        })
    }

    fn lower(&self, insns: &[IrInstruction]) -> Reply<LoweredModule> {
        let mut ledger = o::Ledger::new(self.number);
        let instrs = insns
            .iter()
            .map(|insn| match ledger.lower(&to_request(insn)) {
                Ok(e) => Ok(Lowered {
                    records: e.records,
                    side: e.refs,
                }),
                Err(r) => Err(LoweringRejected {
                    name: r.name(),
                    message: Message::new(r),
                }),
            })
            .collect();
        Ok(LoweredModule {
            instrs,
            replica_groups: ledger.replica_groups,
            source_target_pairs: ledger.source_target_pairs,
            attributes: ledger.attributes,
        })
    }

    /// Vets `p`; keeps the vetted script for `sync_simulate` under the returned ticket.
    fn sync_plan(
        &self,
        p: &SyncProgram,
        _flows: &[SyncFlow],
    ) -> Reply<Result<SyncPlanned, SyncRejected>> {
        VETTED.with(|cell| {
            let Ok(mut v) = cell.try_borrow_mut() else {
                return Err(Fault::Crash("sync_plan re-entered".into()));
            };
            to_script_into(p, &mut v.script);
            match o::sim::vet(&v.script) {
                Err(r) => {
                    v.exp = None;
                    Ok(Err(SyncRejected {
                        class: r.class(),
                        message: format!("{r:?}"),
                    }))
                }
                Ok(exp) => {
                    v.ticket += 1;
                    let planned = SyncPlanned {
                        ids: exp.ids.clone(),
                        finals: exp.finals.clone(),
                        plan: None,
                        stamps: Vec::new(),
                        ticket: v.ticket,
                    };
                    v.exp = Some(exp);
                    Ok(Ok(planned))
                }
            }
        })
    }

    fn sync_simulate(
        &self,
        p: &SyncProgram,
        ticket: u64,
        plan: &[SyncEntry],
        schedule: &[u8],
    ) -> Reply<Result<SyncRun, SyncViolation>> {
        let run = |s: &o::sim::Script, exp: &o::sim::Expectation| {
            o::sim::simulate(s, exp, plan, schedule)
                .map(|t| SyncRun {
                    steps: t.steps,
                    finals: t.finals,
                })
                .map_err(SyncViolation::Run)
        };
        VETTED.with(|cell| {
            if let Ok(v) = cell.try_borrow() {
                if let (Some(exp), true) = (&v.exp, v.ticket == ticket) {
                    return Ok(run(&v.script, exp));
                }
            }
            // Not the program last vetted on this thread: vet it again.
            let mut s = NO_SCRIPT;
            to_script_into(p, &mut s);
            Ok(match o::sim::vet(&s) {
                Ok(exp) => run(&s, &exp),
                Err(r) => Err(SyncViolation::NotVetted(format!("{r:?}"))),
            })
        })
    }

    fn sync_band(&self, bundle: &[u8; 64], ticks: u32) -> Reply<BandReading> {
        let b = o::sim::read_band(bundle);
        Ok(BandReading {
            wait_mode: b.wait_mode,
            wait_idx: b.wait_idx,
            update_mode: b.update_mode,
            update_idx: b.update_idx,
            sync: o::sim::band_sync(&b, ticks).map(|s| (s.wait, s.update)),
        })
    }
}

/// `p` in the oracle's vocabulary, written into `s`, reusing its lists (and each step's).
fn to_script_into(p: &SyncProgram, s: &mut o::sim::Script) {
    s.pool = p.num_semaphores;
    s.grabs.clear();
    s.grabs
        .extend(p.allocs.iter().map(|a| *a == AllocFrom::Top));
    s.steps.truncate(p.instrs.len());
    for (k, i) in p.instrs.iter().enumerate() {
        let unit = match i.engine {
            Engine::Host => o::sim::Unit::Host,
            Engine::Gpsimd(c) => o::sim::Unit::Core(c),
            Engine::Dma(q) => o::sim::Unit::Queue(q),
            Engine::Pseudo => o::sim::Unit::Pseudo,
        };
        let inputs = i.deps.iter().map(|d| o::sim::Edge {
            from: d.producer,
            sem_handle: d.via,
        });
        let signals = i.sems.iter().map(|s| o::sim::Signal {
            handle: s.handle,
            core: s.target_core,
        });
        match s.steps.get_mut(k) {
            Some(st) => {
                st.unit = unit;
                st.inputs.clear();
                st.inputs.extend(inputs);
                st.signals.clear();
                st.signals.extend(signals);
                st.tick = i.mult;
            }
            None => s.steps.push(o::sim::Step {
                unit,
                inputs: inputs.collect(),
                signals: signals.collect(),
                tick: i.mult,
            }),
        }
    }
}

fn band(s: &insn::Sync) -> o::Band {
    (
        s.wait_mode.0,
        s.wait_idx,
        s.update_mode.0,
        s.update_idx,
        s.semaphore_value,
    )
}

fn tensor(t: &TransferOperand) -> o::Tensor {
    (t.tensor_id, t.tensor_base, t.num_elements_per_partition)
}

fn to_request(insn: &IrInstruction) -> o::Request {
    match insn {
        IrInstruction::Collective(c) => o::Request::Collective {
            kind: c.kind.ordinal(),
            op: c.cce_op.ordinal(),
            dtype: c.dtype,
            ap: c.src,
            ap2: c.src2,
            groups: c.replica_groups.clone(),
            pairs: c.source_target_pairs.clone(),
            channel: c.channel_id,
            dim: c.cc_dim,
            band: band(&c.sync),
        },
        IrInstruction::Transfer(t) => o::Request::SendOrRecv {
            send: t.direction == Direction::Send,
            tensor: tensor(&t.operand),
            peer: t.peer,
            band: band(&t.sync),
        },
        IrInstruction::LocalSendRecv(l) => o::Request::LocalSwap {
            kind: l.kind.ordinal(),
            outgoing: tensor(&l.send),
            incoming: tensor(&l.recv),
            peer: l.peer,
            src_dtype: l.src_dtype,
            dst_dtype: l.dst_dtype,
            src_ap: l.src_ap,
            dst_ap: l.dst_ap,
            partition: l.peer_partition,
            bytes: l.bytes_per_partition,
            lnc: l.cores_per_lnc,
            band: band(&l.sync),
        },
    }
}

fn place(p: o::engines::Place) -> SyncSite {
    match p {
        o::engines::Place::At(e, i) => SyncSite::Instr {
            engine: e as u16,
            index: i as u32,
        },
        o::engines::Place::Desc(k) => SyncSite::Dma { index: k as u32 },
    }
}

fn counter((event, i): o::engines::Counter) -> Resource {
    if event {
        Resource::Event(i)
    } else {
        Resource::Semaphore(i)
    }
}

/// A value of the oracle's reading past `u32` (where DE-4 saturates): an answer that diverges.
fn value(v: u64) -> Result<u32, &'static str> {
    u32::try_from(v).map_err(|_| "oracle_value_past_u32")
}

/// An observation in core's vocabulary (a stop reason core does not name: an answer that
/// diverges).
fn observation(ob: &o::engines::Observation) -> Result<EngineFinding, &'static str> {
    use o::engines::Observation as Ob;
    use EngineFinding as F;
    let last = |p: &Option<o::engines::Place>| p.map(place);
    Ok(match ob {
        Ob::Cycle(links) => F::Deadlock {
            cycle: links
                .iter()
                .map(|&(w, c, mode, threshold, v, h)| {
                    Ok(WaitEdge {
                        waiter: place(w),
                        resource: counter(c),
                        mode,
                        threshold,
                        value: value(v)?,
                        helper: place(h),
                    })
                })
                .collect::<Result<_, _>>()?,
        },
        Ob::NeverSatisfied(w, c, mode, t, v, l) => F::UnsatisfiableWait {
            at: place(*w),
            resource: counter(*c),
            mode: *mode,
            threshold: *t,
            value: value(*v)?,
            last_update: last(l),
        },
        Ob::NobodySets(w, event, mode, l) => F::UnsetEvent {
            at: place(*w),
            event: *event,
            mode: *mode,
            last_update: last(l),
        },
        Ob::BelowZero(at, sem, v, d, l) => F::SemaphoreUnderflow {
            at: place(*at),
            sem: *sem,
            value: value(*v)?,
            delta: value(*d)?,
            last_update: last(l),
        },
        Ob::PastTop(at, sem, v, d, l) => F::SemaphoreOverflow {
            at: place(*at),
            sem: *sem,
            value: value(*v)?,
            delta: value(*d)?,
            last_update: last(l),
        },
        Ob::NeverRead(at, c) => F::UnconsumedUpdate {
            at: place(*at),
            resource: counter(*c),
        },
        Ob::GaveUp(at, why, mode) => {
            let mode = *mode;
            let reason = [
                StopReason::RegisterWait { mode },
                StopReason::RegisterUpdate { mode },
                StopReason::UnknownWaitMode { mode },
                StopReason::UnknownUpdateMode { mode },
            ]
            .into_iter()
            .find(|r| r.name() == *why)
            .ok_or("oracle_unknown_stop_reason")?;
            F::AnalysisStopped {
                at: place(*at),
                reason,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_generation_opens_the_oracle_chip_of_that_name() {
        for a in Generation::ALL {
            assert_eq!(OracleSubject::new(a).chip.arch(), a.name(), "{a:?}");
        }
    }

    #[test]
    fn oracle_and_harness_spell_predicates_alike() {
        use o::Predicate as P;
        for p in [
            P::ValidOpcode,
            P::InstWordLen,
            P::HasValidNeuronEvents,
            P::IsCustomOpHeaderOpcode,
            P::CustomOpHeaderReservedZero,
            P::CustomOpHeaderScratchSpaceVal,
            P::IsCustomOpPayloadOpcode,
            P::CustomOpPayloadReservedZero,
        ] {
            assert_eq!(predicate(p).name(), p.name(), "{p:?}");
        }
    }
}
