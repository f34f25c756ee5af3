//! Every number, table and sentence of the documents that comes from the simulation is
//! rendered from `docs/reproduced/` (what `docs/reproduce.sh` measured with the current code),
//! and this test fails when a document says anything else. `docs/reproduce.sh` regenerates the
//! data and then runs `REPRODUCE_FROM=<its output> UPDATE_DOCS=1 cargo test --test
//! documented_numbers`, which distils the runs into `docs/reproduced/` and rewrites the blocks;
//! `UPDATE_DOCS=1` alone rewrites the blocks from the committed data.

mod documented;

use std::path::PathBuf;

use documented::{DOCUMENTS, Data, data_dir, distil::distil, render};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_documents_say_what_the_reproduced_runs_measured() {
    if let Some(from) = std::env::var_os("REPRODUCE_FROM") {
        distil(&repo().join(from), &data_dir());
    }
    let data = Data::open(&data_dir());
    let update = std::env::var_os("UPDATE_DOCS").is_some();
    let mut stale = Vec::new();
    let mut used = Vec::new();
    for doc in DOCUMENTS {
        let path = repo().join(doc);
        let text = std::fs::read_to_string(&path).unwrap();
        let (new, changed) = documented::rerender(&text, |name| {
            used.push(name.to_string());
            render::block(name, &data)
        })
        .unwrap_or_else(|e| panic!("{doc}: {e}"));
        if update && new != text {
            std::fs::write(&path, new).unwrap();
        }
        stale.extend(changed.into_iter().map(|n| format!("{doc}: {n}")));
    }
    for name in render::NAMES {
        assert!(
            used.iter().any(|u| u == name),
            "no document has the block `{name}`: a renderer nothing uses"
        );
    }
    assert!(
        update || stale.is_empty(),
        "these blocks differ from what docs/reproduced/ says (regenerate with \
         docs/reproduce.sh, or UPDATE_DOCS=1 cargo test --test documented_numbers to render \
         the committed data): {stale:?}"
    );
}

#[test]
fn a_changed_number_is_found() {
    // The check above must be able to fail: one digit of a rendered block changed.
    let data = Data::open(&data_dir());
    let render = |n: &str| render::block(n, &data);
    let doc = format!(
        "text\n\n<!-- reproduced:r0-table -->\n{}\n<!-- /reproduced -->\n",
        documented::wrap(render("r0-table").trim_matches('\n'), 100)
    );
    let (_, stale) = documented::rerender(&doc, render).unwrap();
    assert!(
        stale.is_empty(),
        "a freshly rendered block differs from itself"
    );
    let digit = doc
        .find("| 1")
        .or_else(|| doc.find("| 0"))
        .expect("a number in the table")
        + 2;
    let mut changed = doc.clone();
    let other = if &doc[digit..=digit] == "9" { "0" } else { "9" };
    changed.replace_range(digit..=digit, other);
    let (_, stale) = documented::rerender(&changed, render).unwrap();
    assert_eq!(stale, ["r0-table"]);
}
