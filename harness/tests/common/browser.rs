//! A real headless browser (Debian's chromium) for the tests that check a
//! rendered page (`report_html.rs`, `engine_lanes.rs`): a page is loaded
//! with a `<script>` probe appended that writes what the test asserts on
//! into `<pre id=probe>`, read back from the dumped DOM.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub const CHROMIUM: &str = "/usr/bin/chromium";

/// Runs chromium headless on `page` with its own `profile` folder and the
/// caller's `flags` (window size, `--dump-dom`, `--screenshot=…`); its
/// stdout. Killed after 90 s.
pub fn chromium(page: &Path, profile: &Path, flags: &[&str]) -> String {
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(flags)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut s);
        s
    });
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            panic!("chromium did not finish in 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().unwrap()
}

/// Dumps the DOM of `page` (`flags` as for [`chromium`]) and parses the JSON
/// its probe script left in `<pre id=probe>`.
pub fn probe(page: &Path, profile: &Path, flags: &[&str]) -> Value {
    let dom = chromium(page, profile, &[flags, &["--dump-dom"]].concat());
    let probe = dom
        .split("<pre id=\"probe\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .expect("the probe ran");
    let text = probe
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&text).expect("probe JSON")
}

/// Screenshots `page` (`flags` as for [`chromium`]) into `shot`; its bytes,
/// checked to be a PNG.
pub fn screenshot(page: &Path, profile: &Path, flags: &[&str], shot: &Path) -> Vec<u8> {
    let to = format!("--screenshot={}", shot.display());
    chromium(page, profile, &[flags, &[&to]].concat());
    let png = std::fs::read(shot).expect("the screenshot");
    assert!(png.starts_with(b"\x89PNG"), "not a PNG: {}", shot.display());
    png
}
