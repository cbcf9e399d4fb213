//! [`Subject`] over `tpb_core`, the production implementation.

use super::engine_sync_types::{EngineProgram, EngineSyncAnswer, EngineSyncOutcome};
use super::interface::{module_answer, stream_verdict, Capabilities, Reference, Reply, Subject};
use super::lint_types::{LintResult, LintRow};
use super::lowering_types::ModuleAnswer;
use super::lowering_types::{IrInstruction, Lowered, LoweredModule, LoweringRejected, Message};
use super::sync_types::{
    FlowStamps, SyncEntry, SyncFlow, SyncPlanned, SyncProgram, SyncRejected, SyncUpdate, SyncWait,
};
use super::types::{
    hex, BundleSpan, BundleStreamResult, DecodeFail, Decoded, EncodeResult, FieldName, IrAnswer,
    IrQuery, LutResult, LutTable, Name, Predicate, StreamFail, StreamResult, StreamSummary,
    Validator, Value, Verdict,
};
use tpb_core as c;
use tpb_core::{Bundle, Generation};

/// `tpb_core` as a [`Subject`] (registry name `core`), serving one generation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CoreSubject {
    gen: Generation,
}

impl CoreSubject {
    pub fn new(arch: Generation) -> CoreSubject {
        CoreSubject { gen: arch }
    }
}

#[inline]
fn lint_row(e: c::walk::Event) -> LintRow {
    use c::lint::Verdict as V;
    match e {
        c::walk::Event::Instruction {
            at,
            length,
            verdict,
        } => {
            let (verdict, failure) = match verdict {
                V::Valid => ("valid", None),
                V::SkeletonOnly => ("skeleton", None),
                V::Invalid(f) => ("invalid", Some((f.predicate, f.offset))),
            };
            LintRow::Instruction {
                index: at.index,
                offset: at.offset,
                opcode: at.opcode,
                length,
                verdict,
                failure,
            }
        }
        c::walk::Event::Stream(s) => LintRow::StreamError {
            name: s.fault.name(),
            index: s.index,
            offset: s.offset,
            owner: (s.owner.index, s.owner.offset, s.owner.opcode),
        },
    }
}

fn to_sim_plan(plan: &c::sync::SyncPlan) -> Vec<SyncEntry> {
    plan.infos
        .iter()
        .map(|si| SyncEntry {
            waits: si
                .waits
                .iter()
                .map(|w| SyncWait {
                    sem: w.sem,
                    at_least: w.value,
                })
                .collect(),
            updates: si
                .updates
                .iter()
                .map(|u| SyncUpdate {
                    sem: u.sem,
                    add: u.delta,
                    core: u.target_core,
                })
                .collect(),
        })
        .collect()
}

fn side_pair(r: &c::lower::SideRef) -> (&'static str, usize) {
    match *r {
        c::lower::SideRef::ReplicaGroups(i) => ("replica_groups", i),
        c::lower::SideRef::SourceTargetPairs(i) => ("source_target_pairs", i),
        c::lower::SideRef::Attribute(i) => ("attributes", i),
    }
}

fn gate(r: Result<(), c::ir::IrError>) -> IrAnswer {
    IrAnswer::Gate(r.map_err(|e| Name::Known(e.name())))
}

impl Subject for CoreSubject {
    fn name(&self) -> &str {
        "core"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::all()
    }

    #[inline]
    fn validate(&self, v: Validator, b: &[u8; 64]) -> Reply<Verdict> {
        let b = Bundle(*b);
        let r = match v {
            Validator::Header => c::validate::validate_header(&b, self.gen),
            Validator::Payload => c::validate::validate_payload(&b, self.gen),
        };
        Ok(r.err().map(|e| Predicate::Known(e.predicate())))
    }

    fn decode(&self, b: &[u8; 64]) -> Reply<Result<Decoded, DecodeFail>> {
        Ok(match c::decode(&Bundle(*b), self.gen) {
            Ok(i) => Ok(Decoded {
                opcode: i.opcode(),
                mnemonic: i.mnemonic().into(),
                fields: i.fields().into_iter().map(|(n, v)| (n.into(), v)).collect(),
            }),
            Err(e) => Err(DecodeFail {
                field: Name::Known(e.field()),
                offset: e.offset(),
            }),
        })
    }

    fn encode(&self, opcode: u8, fields: &[(FieldName, Value)]) -> Reply<EncodeResult> {
        let f: Vec<(&str, Value)> = fields.iter().map(|(n, v)| (&**n, v.clone())).collect();
        Ok(c::Instruction::from_fields(opcode, &f, self.gen)
            .and_then(|i| i.encode(self.gen))
            .map(|b| b.0)
            .map_err(|e| match e {
                // Name the unknown input field itself, not the reason tag.
                c::EncodeError::UnknownField { position } => fields
                    .get(position)
                    .map_or(Name::Known(e.field()), |(n, _)| {
                        Name::Unknown(n.to_string())
                    }),
                _ => Name::Known(e.field()),
            }))
    }

    #[inline]
    fn lut(&self, table: LutTable, n: u32) -> Reply<LutResult> {
        Ok(table.core(n).map_err(Name::Known))
    }

    fn validate_stream(&self, bytes: &[u8]) -> Reply<Result<(), StreamFail>> {
        stream_verdict(self, bytes)
    }

    fn lower_module(&self, insns: &[IrInstruction]) -> Reply<ModuleAnswer> {
        module_answer(self, insns)
    }
}

impl Reference for CoreSubject {
    fn parse_stream(&self, bytes: &[u8]) -> Reply<StreamResult> {
        Ok(match c::stream::parse_custom_op_stream(bytes, self.gen) {
            Ok(items) => Ok(items
                .into_iter()
                .map(|it| match it {
                    c::stream::StreamItem::Group {
                        header_index, args, ..
                    } => StreamSummary::Group {
                        header_index,
                        n_args: args.len(),
                    },
                    c::stream::StreamItem::Other { index, opcode } => {
                        StreamSummary::Other { index, opcode }
                    }
                })
                .collect()),
            Err(e) => Err(StreamFail::at(e.name(), e.index(), bytes.len())),
        })
    }

    fn parse_bundle_stream(&self, bytes: &[u8]) -> Reply<BundleStreamResult> {
        use c::stream::{BundleItem, StreamItem};
        let span = |start, count, what| BundleSpan { start, count, what };
        Ok(match c::stream::parse_bundle_stream(bytes, self.gen) {
            Ok(items) => Ok(items
                .into_iter()
                .map(|item| match item {
                    BundleItem::CollectivePair { index } => span(index, 2, "pair"),
                    BundleItem::Custom(StreamItem::Other { index, .. }) => span(index, 1, "single"),
                    BundleItem::Custom(StreamItem::Group {
                        header_index, args, ..
                    }) => span(header_index, args.len() + 2, "group"),
                })
                .collect()),
            Err(e) => Err(StreamFail::at(e.name(), e.index(), bytes.len())),
        })
    }

    fn engine_sync(&self, p: &EngineProgram) -> Reply<EngineSyncAnswer> {
        let steps: Vec<Vec<c::engines::Step>> = p
            .engines
            .iter()
            .map(|e| e.iter().map(|b| c::engines::Step::from_band(*b)).collect())
            .collect();
        let refs: Vec<&[c::engines::Step]> = steps.iter().map(Vec::as_slice).collect();
        let r = c::engines::analyze(&refs, &p.dma, c::engines::Options { links: true })
            .map_err(|e| e.name());
        Ok(r.map(|r| EngineSyncOutcome { executed: 0, ..r }))
    }

    /// Core's streaming walker, as `tpbconform check` runs it.
    fn lint_stream(&self, bytes: &[u8]) -> Reply<LintResult> {
        let (bundles, []) = bytes.as_chunks::<{ c::layout::BUNDLE_LEN }>() else {
            return Ok(Err(format!("{:?}", c::LengthError { len: bytes.len() })));
        };
        // About one row per bundle (a 128-byte instruction has one, an error one more).
        let mut rows = Vec::with_capacity(bundles.len() + 1);
        let mut out = |e| rows.push(lint_row(e));
        let mut w = c::walk::Walker::new(self.gen);
        for b in bundles {
            w.push(&Bundle(*b), &mut out);
        }
        w.finish(&mut out);
        Ok(Ok(rows))
    }

    fn ir(&self, q: &IrQuery) -> Reply<IrAnswer> {
        use c::ir;
        Ok(match q {
            IrQuery::CheckCustomOp {
                args,
                outputs,
                arch,
            } => {
                // Codes >= 4 have no core variant; they map to Other / Mariana, which
                // fail the same checks (bad_memory_space / bad_arch) as in the oracle.
                let space = |m: &u8| ir::MemSpace::from_code(*m).unwrap_or(ir::MemSpace::Other);
                let a: Vec<ir::MemSpace> = args.iter().map(space).collect();
                let o: Vec<ir::MemSpace> = outputs.iter().map(space).collect();
                let arch = ir::Arch::from_code(*arch).unwrap_or(ir::Arch::Mariana);
                gate(ir::check_custom_op(&a, &o, arch))
            }
            IrQuery::SbScratchpad(q) => gate(ir::is_cc_having_sb_scratchpad(q)),
            IrQuery::CcDim(d) => gate(ir::check_cc_dim(*d)),
            IrQuery::RankIdOutput(k) => gate(ir::check_rank_id_output(*k)),
            IrQuery::Lnc(n) => gate(ir::check_lnc(*n)),
            IrQuery::Route(n) => IrAnswer::Route(ir::route_local_collective(*n)),
        })
    }

    fn lower(&self, insns: &[IrInstruction]) -> Reply<LoweredModule> {
        let mut m = c::lower::Module::new(self.gen);
        let instrs = insns
            .iter()
            .map(|insn| match c::lower::lower(&mut m, insn) {
                Ok(l) => Ok(Lowered {
                    side: l.side.iter().map(side_pair).collect(),
                    // In place: `Bundle` is one `[u8; 64]`.
                    records: l.records.into_iter().map(|b| b.0).collect(),
                }),
                Err(e) => Err(LoweringRejected {
                    name: e.name(),
                    message: Message::new(e),
                }),
            })
            .collect();
        Ok(LoweredModule {
            instrs,
            replica_groups: m.replica_groups().to_vec(),
            source_target_pairs: m.source_target_pairs().to_vec(),
            attributes: m
                .attributes()
                .iter()
                .map(|a| (a.kind, a.direction.name(), a.peer))
                .collect(),
        })
    }

    /// SPEC §5.4 "IR (DL-1)" and its table; §5.1.
    fn check_lowered(
        &self,
        insn: &IrInstruction,
        records: &[[u8; 64]],
    ) -> Reply<Result<(), String>> {
        let check = || {
            use c::lower::IrInstruction as Ir;
            let decode = |b: &[u8; 64]| c::decode(&Bundle(*b), self.gen);
            for b in records {
                decode(b).map_err(|e| format!("record {} does not decode: {e:?}", hex(b)))?;
            }
            let Ir::Collective(col) = insn else {
                return Ok(());
            };
            let tag = c::lut::dtype_to_wire(col.dtype, self.gen.dtype_column())
                .map_err(|e| format!("{e}"))?;
            match records.first().map(decode) {
                Some(Ok(c::Instruction::CollectiveCompute(p)))
                    if (p.kind, p.cce_op, p.dtype, p.ap)
                        == (col.kind, col.cce_op, tag, col.src) => {}
                other => return Err(format!("0xD9 does not recover the collective: {other:?}")),
            }
            match (col.src2, records.get(1).map(decode)) {
                (None, None) => Ok(()),
                (Some(ap), Some(Ok(c::Instruction::CollectiveComputeSecondary(s))))
                    if (s.kind, s.cce_op, s.dtype, s.ap, s.channel_id)
                        == (col.kind, col.cce_op, tag, ap, col.channel_id) =>
                {
                    Ok(())
                }
                (_, other) => Err(format!("0xDA does not recover the second leg: {other:?}")),
            }
        };
        Ok(check())
    }

    fn sync_plan(
        &self,
        p: &SyncProgram,
        flows: &[SyncFlow],
    ) -> Reply<Result<SyncPlanned, SyncRejected>> {
        use c::sync as model;
        let plan = match model::alloc_semaphores(p) {
            Ok(plan) => plan,
            Err(e) => {
                return Ok(Err(SyncRejected {
                    class: e.class(),
                    message: e.to_string(),
                }))
            }
        };
        let finals = plan
            .values
            .iter()
            .filter(|(_, v)| *v != 0)
            .map(|(k, v)| ((k.core, k.sem), u64::from(v)))
            .collect();
        let stamps = flows
            .iter()
            .map(|f| {
                let mut header = [0u8; 64];
                header[0] = 0x85;
                header[1] = 0x10;
                let header = model::stamp_custom_op_header(
                    &mut header,
                    &plan,
                    f.custom_op,
                    f.dma_in,
                    f.result_dma,
                )
                .map(|_| header)
                .map_err(|e| e.to_string());
                let consumers = f
                    .consumers
                    .iter()
                    .map(|&c| {
                        let mut b = [0u8; 64];
                        model::stamp_consumer(&mut b, &plan, c, f.result_dma)
                            .map(|_| b)
                            .map_err(|e| e.to_string())
                    })
                    .collect();
                FlowStamps { header, consumers }
            })
            .collect();
        Ok(Ok(SyncPlanned {
            ids: plan.sem_ids.clone(),
            finals,
            plan: Some(to_sim_plan(&plan)),
            stamps,
            ticket: 0,
        }))
    }
}
