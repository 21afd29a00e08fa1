//! Communicators are named by how they were made, wherever they are named (`profile`,
//! `report`, `decode`, `matrix --comm`): the expected descriptions are worked out by hand from
//! the test apps' code, the ids they belong to found in the decoded calls that made them.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// The `made by` column of `profile`'s communicator table, by communicator.
fn made_by(trace: &Path) -> BTreeMap<String, String> {
    let out = run_ok(Command::new(conifer()).arg("profile").arg(trace));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let table = text
        .split("@--- communicators ---\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no communicator table:\n{text}"));
    let header = table.lines().next().unwrap();
    let column = header.find("made by").expect("a made by column");
    table
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| {
            let name = l.split_whitespace().next().unwrap().to_string();
            (name, l[column..].trim().to_string())
        })
        .collect()
}

/// The `made by` text of every communicator with id `id` in `made` (communicators sharing an
/// id are listed one by one, as `comm0@2`: the world rank of local rank 0 follows), checked to
/// be one text, and how many communicators share the id.
fn made_by_id(made: &BTreeMap<String, String>, id: &str) -> (String, usize) {
    let parts: Vec<&String> = made
        .iter()
        .filter(|(name, _)| *name == id || name.starts_with(&format!("{id}@")))
        .map(|(_, text)| text)
        .collect();
    assert!(!parts.is_empty(), "{id} not listed: {made:?}");
    assert!(parts.iter().all(|t| *t == parts[0]), "{id}: {parts:?}");
    (parts[0].clone(), parts.len())
}

/// The communicator rank 0's first call of `function` made (its `slot` argument).
fn made_in(trace: &Path, function: &str, slot: &str) -> String {
    decode_all(trace)
        .into_iter()
        .find(|c| c["rank"] == 0 && c["function"] == function)
        .unwrap_or_else(|| panic!("rank 0 calls no {function}"))["args"][slot]
        .as_str()
        .unwrap()
        .to_string()
}

/// comms.c on 4 ranks: `MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank)` makes two halves of
/// 2 (colours 0 and 1, keys the world ranks), `MPI_Comm_dup` of the half, then
/// `MPI_Intercomm_create` between the halves and `MPI_Intercomm_merge` back to 4.
#[test]
fn comms_are_named_by_the_calls_that_made_them() {
    let dir = scratch("comm-names");
    let trace = traced(&dir, "comms", 4, &[], &apps_dir().join("comms"), &["3"]);
    let half = made_in(&trace, "MPI_Comm_split", "newcomm");
    let dup = made_in(&trace, "MPI_Comm_dup", "newcomm");
    let inter = made_in(&trace, "MPI_Intercomm_create", "newintercomm");
    let merged = made_in(&trace, "MPI_Intercomm_merge", "newintracomm");
    let made = made_by(&trace);
    assert_eq!(made["MPI_COMM_WORLD"], "predefined");
    assert_eq!(
        made_by_id(&made, &half),
        (
            "Comm_split of MPI_COMM_WORLD, colour 0|1, key = rank in parent; 2 groups of 2".into(),
            2
        )
    );
    assert_eq!(
        made_by_id(&made, &dup),
        (format!("Comm_dup of {half}; 2 groups of 2"), 2)
    );
    let (inter_made, _) = made_by_id(&made, &inter);
    assert!(
        inter_made.starts_with(&format!("Intercomm_create of {half}")),
        "{made:?}"
    );
    assert_eq!(
        made_by_id(&made, &merged),
        (format!("Intercomm_merge of {inter}; size 4"), 1)
    );

    // decode says the same on stderr, before the calls; the report has the column.
    let out = run_ok(Command::new(conifer()).arg("decode").arg(&trace));
    let legend = String::from_utf8_lossy(&out.stderr);
    assert!(
        legend.contains(&format!("conifer: {half} = Comm_split of MPI_COMM_WORLD")),
        "{legend}"
    );
    let page = dir.join("report.html");
    run_ok(
        Command::new(conifer())
            .arg("report")
            .arg(&trace)
            .arg("-o")
            .arg(&page),
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<th class=\"l\">made by</th>"),
        "no made by column"
    );
    assert!(html.contains(&format!(
        "<td class=\"l\">Comm_dup of {half}; 2 groups of 2</td>"
    )));
}

/// stencil3d.c on 4 ranks: `MPI_Dims_create(4, 3)` gives 2 x 2 x 1, `MPI_Cart_create` makes a
/// periodic grid of it; `MPI_Cart_sub` keeps dimensions y and z: 2 planes of 2 ranks.
#[test]
fn cartesian_communicators_say_their_dims_in_profile_and_matrix() {
    let dir = scratch("comm-names-cart");
    let trace = traced(
        &dir,
        "stencil3d",
        4,
        &[],
        &apps_dir().join("stencil3d"),
        &["2"],
    );
    let cart = made_in(&trace, "MPI_Cart_create", "comm_cart");
    let plane = made_in(&trace, "MPI_Cart_sub", "newcomm");
    let made = made_by(&trace);
    let grid = "Cart_create of MPI_COMM_WORLD, dims [2,2,1], periodic [1,1,1]; size 4";
    assert_eq!(made[&cart], grid);
    assert_eq!(
        made_by_id(&made, &plane),
        (
            format!("Cart_sub of {cart}, keeping dims [0,1,1]; 2 groups of 2"),
            2
        )
    );
    let out = run_ok(
        Command::new(conifer())
            .args(["matrix", "--comm", &cart])
            .arg(&trace),
    );
    let header = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert!(
        header.contains(&format!("calls on {cart} ({grid})")),
        "{header}"
    );
}
