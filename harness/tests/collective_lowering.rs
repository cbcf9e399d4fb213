//! The `collective_lowering` differential (core vs oracle + properties) on
//! generated cases under every generation: zero divergences, and the
//! generator reaches every lowering verdict (not a vacuous pass).

use std::collections::BTreeSet;
use tpb_core::lower::Generation;
use tpbconform::gate::{self, GateConfig};
use tpbconform::generators::SplitMix64;
use tpbconform::kinds::collective_lowering::collective_lowering_case;
use tpbconform::targets::Target;

fn bytes(seed: u64, n: usize) -> Vec<u8> {
    SplitMix64(seed).bytes(n)
}

#[test]
fn agree_under_every_generation_and_cover_every_verdict() {
    let mut verdicts = BTreeSet::new();
    for gen in Generation::ALL {
        let (mut lowered, mut rejected) = (0, 0);
        for seed in 0..3000u64 {
            let data = bytes(seed, 64 + (seed as usize % 700));
            match collective_lowering_case(&data, Some(gen)) {
                Ok(o) => {
                    let ok = o.verdicts.iter().filter(|v| v.starts_with("ok:")).count();
                    lowered += ok;
                    rejected += o.verdicts.len() - ok;
                    verdicts.extend(o.verdicts);
                }
                Err(d) => panic!("{d:?}"),
            }
        }
        assert!(
            lowered > 1000 && rejected > 200,
            "{gen:?}: {lowered} lowered, {rejected} rejected"
        );
    }
    for name in [
        "send_recv_kind",
        "not_send_recv_kind",
        "bad_cc_dim",
        "dtype_out_of_range",
        "cce_op_not_shipped",
        "op_not_accepted",
        "missing_second_ap",
        "unexpected_second_ap",
        "pairs_on_group_kind",
        "groups_on_pair_kind",
        "no_replica_groups",
        "no_source_target_pairs",
        "too_large",
        "empty_group",
        "duplicate_rank",
        "duplicate_source",
        "duplicate_target",
        "record",
    ] {
        assert!(
            verdicts.contains(&format!("err:{name}")),
            "never generated: {name}"
        );
    }
    for ops in ["ok:d9", "ok:d9+da", "ok:cb", "ok:cb+cb", "ok:bf"] {
        assert!(verdicts.contains(ops), "never lowered to {ops}");
    }
}

/// The gate runs the target under every generation (case i under the
/// (i mod 4)-th, as every gate target), each with lowered and rejected
/// cases; `--arch` narrows it to one.
#[test]
fn gate_runs_it_under_every_generation_and_arch_narrows_it() {
    let corpus = std::env::temp_dir().join(format!("tpb-lowering-gate-{}", std::process::id()));
    let cfg = GateConfig {
        cases: 2_000,
        seconds: None,
        no_corpus: true,
        targets: vec![Target::named("collective_lowering")],
        corpus_dir: corpus,
        threads: 2,
        ..GateConfig::default()
    };
    let keys = |cfg: &GateConfig| -> BTreeSet<String> {
        let run = gate::run(cfg, None);
        assert!(run.passed(), "{:?}", run.failures);
        let (_, st) = &run.targets[0];
        assert_eq!(st.ran, 2_000);
        st.coverage.keys().cloned().collect()
    };
    let all = keys(&cfg);
    for g in ["v2", "v3", "v4", "v5"] {
        assert!(all.contains(&format!("{g} ok:d9+da")), "{g}: {all:?}");
        assert!(
            all.iter().any(|k| k.starts_with(&format!("{g} err:"))),
            "{g}: {all:?}"
        );
    }
    // 0xBF exists from v3 (S003 §5): never on v2.
    assert!(
        !all.contains("v2 ok:bf") && all.contains("v3 ok:bf"),
        "{all:?}"
    );
    let v4 = keys(&GateConfig {
        arches: vec![Generation::V4],
        ..cfg.clone()
    });
    assert!(v4.iter().all(|k| k.starts_with("v4 ")), "{v4:?}");
}
