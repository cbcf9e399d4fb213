//! The lane picture of a subgraph (SPEC §11, `report::lanes`), rendered in a real headless
//! browser (Debian's chromium): one lane per engine and one for the DMA increments, a mark per
//! instruction, a grey arrow per satisfied wait, the deadlock's cycle drawn in red with both
//! edges, the unsatisfiable wait filled orange, no sideways scroll at 1400 px, and every finding
//! listed. Prints SKIPPED when chromium is absent (`.ci/run` installs it). With
//! `TPB_LANES_SCREENSHOT=FILE` the screenshot is kept there (docs/img/engine-lanes.png).

mod common;

use common::browser::{probe, screenshot, CHROMIUM};
use std::path::Path;
use tpb_neff::build::band;
use tpbconform::report::lanes;
use tpbconform::subjects::{registry, DmaRow, EngineProgram};

/// The window the lanes are checked in (no sideways scroll at 1400 px).
const WINDOW: &[&str] = &["--hide-scrollbars", "--window-size=1400,900"];

/// PE waits for a DMA then feeds Act; Act and Pool each wait for the other's next update (a
/// deadlock); DVE waits for two increments of S\[7\] and gets one (unsatisfiable). Mode bytes
/// from FACTS §2: 0x05 WAIT_FOR_SEM_GE_IMM, 0x13 SEM_INC_COMPLETE.
fn program() -> (EngineProgram, Vec<String>) {
    let ge = |s: u8, t: u32| band(0x05, s, 0, 0, t);
    let inc = |s: u8| band(0, 0, 0x13, s, 0);
    let p = EngineProgram {
        engines: vec![
            vec![ge(5, 16), inc(1), band(0, 0, 0, 0, 0), inc(7)],
            vec![ge(1, 1), inc(2), ge(3, 1), inc(4)],
            vec![ge(2, 1), ge(4, 1), inc(3)],
            vec![ge(7, 2), band(0, 0, 0, 0, 0)],
        ],
        dma: vec![DmaRow {
            sem: 5,
            by: 16,
            trigger: None,
        }],
    };
    let names = ["PE", "Act", "Pool", "DVE"]
        .iter()
        .map(|n| format!("sg00 {n}"))
        .collect();
    (p, names)
}

const PROBE: &str = r#"<script>
const q = s => Array.from(document.querySelectorAll(s));
const r = {
  scrollWidth: document.documentElement.scrollWidth,
  clientWidth: document.documentElement.clientWidth,
  marks: q('rect.mark').length,
  links: q('path.link').map(p => [p.dataset.from, p.dataset.to]),
  cycle: q('path.cycle').map(p => [p.dataset.from, p.dataset.to, getComputedStyle(p).stroke]),
  blocked: q('rect.mark.blocked').map(m => m.dataset.site),
  unsatisfiable: q('rect.mark.unsatisfiable').map(m => [m.dataset.site, getComputedStyle(m).fill]),
  findings: q('ol.findings li').map(l => l.className),
  deadlockText: q('ol.findings li.deadlock').map(l => l.textContent),
};
const p = document.createElement('pre');
p.id = 'probe';
p.textContent = JSON.stringify(r);
document.body.appendChild(p);
</script>"#;

#[test]
fn the_lanes_show_links_and_the_deadlock_cycle_in_red() {
    let (p, names) = program();
    let o = registry::core()
        .engine_sync(&p)
        .expect("core answers")
        .expect("accepted");
    let kinds: Vec<&str> = o.findings.iter().map(|f| f.kind()).collect();
    assert_eq!(kinds, ["unsatisfiable_wait", "deadlock"]);
    let title = "sg00: four engines";
    let html = lanes::page(title, &[lanes::section(title, &p, &o, &names)], "");
    // Without a browser: the page names both sides of the cycle.
    assert!(html.contains("sg00 Act #2 waits S[3]"), "{html}");
    assert!(html.contains("on sg00 Pool #2"), "{html}");
    if !Path::new(CHROMIUM).exists() {
        eprintln!("SKIPPED: {CHROMIUM} not installed");
        return;
    }
    let root = common::tmp("lanes", "page");
    std::fs::create_dir_all(&root).unwrap();
    let page = root.join("lanes.html");
    std::fs::write(&page, html.replace("</body>", &format!("{PROBE}</body>"))).unwrap();
    let r = probe(&page, &root.join("profile"), WINDOW);
    assert_eq!(r["marks"], 14, "13 instructions and 1 DMA: {r}");
    assert!(
        r["scrollWidth"].as_u64() <= r["clientWidth"].as_u64(),
        "sideways scroll: {r}"
    );
    let links: Vec<(String, String)> = serde_json::from_value(r["links"].clone()).unwrap();
    for want in [
        ("dma 0", "engine 0 #0"),
        ("engine 0 #1", "engine 1 #0"),
        ("engine 1 #1", "engine 2 #0"),
    ] {
        assert!(
            links.contains(&(want.0.into(), want.1.into())),
            "{want:?} in {links:?}"
        );
    }
    let cycle: Vec<(String, String, String)> = serde_json::from_value(r["cycle"].clone()).unwrap();
    let red = "rgb(238, 0, 0)";
    assert_eq!(
        cycle,
        [
            ("engine 2 #2".into(), "engine 1 #2".into(), red.into()),
            ("engine 1 #3".into(), "engine 2 #1".into(), red.into()),
        ],
        "{r}"
    );
    assert_eq!(
        r["unsatisfiable"],
        serde_json::json!([["engine 3 #0", "rgb(255, 166, 77)"]])
    );
    assert_eq!(
        r["findings"],
        serde_json::json!(["unsatisfiable_wait", "deadlock"])
    );
    let shot = std::env::var_os("TPB_LANES_SCREENSHOT")
        .map_or_else(|| root.join("lanes.png"), std::path::PathBuf::from);
    let png = screenshot(&page, &root.join("profile2"), WINDOW, &shot);
    assert!(png.len() > 5_000, "{} bytes", png.len());
    let _ = std::fs::remove_dir_all(&root);
}
