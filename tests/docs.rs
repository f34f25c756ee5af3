//! Documents generated from the code stay current: `docs/configuration.md` is the config's keys
//! (their fields' docs and specs) written out. Regenerate with `UPDATE_DOCS=1 cargo test --test
//! docs`.

use std::path::PathBuf;

use pandemic_boids::sim::config::reference_markdown;

#[test]
fn the_configuration_reference_is_generated_from_the_key_table() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("docs")
        .join("configuration.md");
    let want = reference_markdown();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/configuration.md is stale (the key table changed); regenerate it with \
         UPDATE_DOCS=1 cargo test --test docs"
    );
}
