//! The reference library from C and C++: `tests/c/reference_test.c`
//! includes `include/tpb_subject.h`, links `libtpb_reference.so` and calls
//! every function the header declares, checking each answer against a value
//! SPEC.md states. Compiled with gcc as C11 and with g++ as C++17.

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// The function names `include/tpb_subject.h` declares.
fn declared_functions() -> BTreeSet<String> {
    let header = std::fs::read_to_string(support::root().join("include/tpb_subject.h"))
        .expect("include/tpb_subject.h");
    let mut names = BTreeSet::new();
    for line in header.lines() {
        let line = line.trim_start();
        if line.starts_with('*') || line.starts_with("/*") || line.starts_with('#') {
            continue;
        }
        // `<type> tpb_name(` at the start of a declaration.
        if let Some(open) = line.find('(') {
            let head = &line[..open];
            if let Some(name) = head.split_whitespace().last() {
                let name = name.trim_start_matches('*');
                if name.starts_with("tpb_") && head.contains(' ') {
                    names.insert(name.to_string());
                }
            }
        }
    }
    names
}

fn test_source() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/reference_test.c")
}

#[test]
fn the_c_test_calls_every_function_the_header_declares() {
    let declared = declared_functions();
    assert!(
        declared.len() >= 14,
        "the header parse found only {declared:?}"
    );
    let source = std::fs::read_to_string(test_source()).unwrap();
    let missing: Vec<&String> = declared
        .iter()
        .filter(|f| !source.contains(&format!("{f}(")))
        .collect();
    assert!(
        missing.is_empty(),
        "reference_test.c never calls {missing:?}"
    );
}

/// Compiles the test with `compiler` and `flags`, runs it, and returns the
/// number of checks it passed.
fn build_and_run(compiler: &str, flags: &[&str]) -> u64 {
    let lib = support::library();
    let lib_dir = lib.parent().unwrap();
    let out = tempfile::tempdir().unwrap();
    let exe = out.path().join("reference_test");
    let built = Command::new(compiler)
        .args(flags)
        .args(["-Wall", "-Wextra", "-Werror", "-pedantic", "-I"])
        .arg(support::root().join("include"))
        .arg(test_source())
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(lib_dir)
        .arg("-ltpb_reference")
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .output()
        .unwrap_or_else(|e| panic!("{compiler} does not run: {e}"));
    assert!(
        built.status.success(),
        "{compiler} failed:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let run = Command::new(&exe).output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "reference_test ({compiler}) failed:\n{stdout}\n{stderr}"
    );
    let n: u64 = stdout
        .strip_prefix("reference_test: ")
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no check count in {stdout:?}"));
    n
}

#[test]
fn the_reference_answers_from_c_as_spec_states() {
    let n = build_and_run("gcc", &["-std=c11", "-x", "c"]);
    // Every CHECK ran (a test that returned early would pass fewer).
    assert!(n >= 150, "only {n} checks ran");
}

#[test]
fn the_reference_answers_from_cpp_as_spec_states() {
    let n = build_and_run("g++", &["-std=c++17", "-x", "c++"]);
    assert!(n >= 150, "only {n} checks ran");
}
