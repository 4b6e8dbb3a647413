//! Records the commit the binary is built from (`QUIVER_GIT_SHA`: seven hex digits, as NebulaGraph's `Git Info
//! Sha`), or `unknown` outside a git checkout.

use std::process::Command;

fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // Rebuilt when HEAD moves: a commit changes the ref HEAD names, a checkout HEAD itself.
    for f in [".git/HEAD", ".git/refs/heads", ".git/packed-refs"] {
        let p = root.join(f);
        if p.exists() {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
    let sha = Command::new("git")
        .args(["rev-parse", "--short=7", "HEAD"])
        .current_dir(&root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=QUIVER_GIT_SHA={sha}");
}
