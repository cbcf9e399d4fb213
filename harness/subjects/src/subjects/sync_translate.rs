//! The translator of `sync_handshake`: a program in the model's vocabulary
//! (`tpb_core::sync`) to the simulator's (`tpb_oracle::sim`), and the
//! model's plan to the simulator's plan entries (field-by-field mappings; no
//! logic). The comparator is [`crate::kinds::sync_handshake`], the programs
//! come from [`crate::generators::sync_program`].

use tpb_core::sync::{self as model, AllocFrom, Engine, Program};
use tpb_oracle::sim;

/// The same program in the oracle's vocabulary, written into `s`, reusing its lists (and
/// each step's) from an earlier program.
pub fn to_script_into(p: &Program, s: &mut sim::Script) {
    s.pool = p.num_semaphores;
    s.grabs.clear();
    s.grabs
        .extend(p.allocs.iter().map(|a| *a == AllocFrom::Top));
    s.steps.truncate(p.instrs.len());
    for (k, i) in p.instrs.iter().enumerate() {
        let unit = match i.engine {
            Engine::Host => sim::Unit::Host,
            Engine::Gpsimd(c) => sim::Unit::Core(c),
            Engine::Dma(q) => sim::Unit::Queue(q),
            Engine::Pseudo => sim::Unit::Pseudo,
        };
        let inputs = i.deps.iter().map(|d| sim::Edge {
            from: d.producer,
            sem_handle: d.via,
        });
        let signals = i.sems.iter().map(|s| sim::Signal {
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
            None => s.steps.push(sim::Step {
                unit,
                inputs: inputs.collect(),
                signals: signals.collect(),
                tick: i.mult,
            }),
        }
    }
}

/// The model's plan in the oracle's vocabulary.
pub fn to_sim_plan(plan: &model::SyncPlan) -> Vec<sim::PlanEntry> {
    plan.infos
        .iter()
        .map(|si| sim::PlanEntry {
            waits: si
                .waits
                .iter()
                .map(|w| sim::PlanWait {
                    sem: w.sem,
                    at_least: w.value,
                })
                .collect(),
            updates: si
                .updates
                .iter()
                .map(|u| sim::PlanUpdate {
                    sem: u.sem,
                    add: u.delta,
                    core: u.target_core,
                })
                .collect(),
        })
        .collect()
}
