//! Structure trees of the CYPRESS paper's programs and of multi-file and Fortran programs,
//! built with real clang-19 / flang-new-19. Expected trees are written down from the paper
//! (Figures 3, 5/7 and 8), not from the tool's output.

mod common;
use common::*;

#[test]
fn figure_5_gives_figure_7() {
    let dir = scratch("fig5");
    build(&dir, &["cc", "-O2", "-g", &program("fig5.c"), "-o", "fig5"]);
    let tree = tree(&dir, "fig5");
    // Figure 7: 0 root; 1 loop { 2 br {3 Send}, 4 br {5 Recv}, 6 loop (bar) {7 Bcast} },
    // 8 br {9 Reduce}; foo() (no MPI) pruned. fig5.c wraps the paper's main in MPI set-up:
    // Init, Comm_rank, Comm_size, Comm_split before (ids shift by 4), Comm_free, Finalize after.
    assert_eq!(
        shape(&tree),
        "root{MPI_Init,MPI_Comm_rank,MPI_Comm_size,MPI_Comm_split,\
         loop{branch{MPI_Send},branch{MPI_Recv},loop{MPI_Bcast}},\
         branch{MPI_Reduce},MPI_Comm_free,MPI_Finalize}"
    );
    let figure7 = [
        (1, "loop", 25),
        (2, "branch", 26),
        (3, "MPI_Send", 27),
        (4, "branch", 26),
        (5, "MPI_Recv", 29),
        (6, "loop", 12),
        (7, "MPI_Bcast", 13),
        (8, "branch", 34),
        (9, "MPI_Reduce", 35),
    ];
    let vertices = preorder(&tree);
    for (id, label, line) in figure7 {
        let (got_id, got_label, got_line) = &vertices[id + 4];
        assert_eq!(
            (*got_id, got_label.as_str(), *got_line),
            (id as u64 + 4, label, line)
        );
    }
    assert_eq!(vertices.len(), 16);
    assert!(tree.to_string().contains("fig5.c"));
}

#[test]
fn figure_8_recursion_is_a_loop_with_branch_arms() {
    let dir = scratch("fig8");
    build(&dir, &["cc", "-O2", &program("fig8.c"), "-o", "fig8"]);
    let tree = tree(&dir, "fig8");
    // Figure 8: Loop { Br1 {Bcast, Reduce}, Br2 {Bcast}, Br3 {Reduce} }.
    assert_eq!(
        shape(&tree),
        "root{MPI_Init,MPI_Comm_rank,loop{branch{MPI_Bcast,MPI_Reduce},branch{MPI_Bcast},branch{MPI_Reduce}},MPI_Finalize}"
    );
    assert_eq!(tree["children"][2]["name"], "foo");
}

#[test]
fn figure_3_jacobi_is_a_loop_of_four_branches() {
    let dir = scratch("jacobi");
    build(&dir, &["cc", "-O3", &program("jacobi.c"), "-o", "jacobi"]);
    // Figure 3: the loop at line 8 holds four branches (lines 9, 11, 13, 15), each one call.
    assert_eq!(
        shape(&tree(&dir, "jacobi")),
        "root{MPI_Init,MPI_Comm_rank,MPI_Comm_size,\
         loop{branch{MPI_Send},branch{MPI_Recv},branch{MPI_Send},branch{MPI_Recv}},MPI_Reduce,MPI_Finalize}"
    );
}

#[test]
fn fortran_use_mpi_program() {
    let dir = scratch("fortran");
    build(&dir, &["fc", "-O2", &program("ring.f90"), "-o", "ring_f"]);
    let tree = tree(&dir, "ring_f");
    // The 4-iteration DO loop survives (analysed before optimisation); the subroutine's
    // Allreduce replaces the call under the IF.
    assert_eq!(
        shape(&tree),
        "root{MPI_Init,MPI_Comm_rank,MPI_Comm_size,loop{MPI_Sendrecv,branch{MPI_Allreduce}},MPI_Finalize}"
    );
    let vertices = preorder(&tree);
    assert_eq!(vertices[5], (5, "MPI_Sendrecv".to_string(), 16));
    assert_eq!(vertices[7], (7, "MPI_Allreduce".to_string(), 31));
}

const TWO_FILE: &str =
    "root{MPI_Init,MPI_Comm_rank,MPI_Comm_size,loop{branch{MPI_Sendrecv}},MPI_Allreduce,MPI_Finalize}";

#[test]
fn two_files_in_one_command_and_in_separate_steps() {
    let dir = scratch("two_file");
    build(
        &dir,
        &[
            "cc",
            &program("main2.c"),
            &program("halo2.c"),
            "-o",
            "one_step",
        ],
    );
    assert_eq!(shape(&tree(&dir, "one_step")), TWO_FILE);
    build(
        &dir,
        &["cc", "-O2", "-c", &program("main2.c"), "-o", "main2.o"],
    );
    build(
        &dir,
        &["cc", "-O2", "-c", &program("halo2.c"), "-o", "halo2.o"],
    );
    build(&dir, &["cc", "main2.o", "halo2.o", "-o", "steps"]);
    let tree = tree(&dir, "steps");
    assert_eq!(shape(&tree), TWO_FILE);
    assert!(
        tree.to_string().contains("halo2.c"),
        "callee lines come from its own file"
    );
}

#[test]
fn bitcode_static_archive_and_plain_objects() {
    let dir = scratch("archive");
    build(&dir, &["cc", "-c", &program("halo2.c"), "-o", "halo2.o"]);
    ok(&dir, "llvm-ar-19", &["rcs", "libhalo.a", "halo2.o"]);
    build(
        &dir,
        &["cc", &program("main2.c"), "-L.", "-lhalo", "-o", "from_lib"],
    );
    assert_eq!(shape(&tree(&dir, "from_lib")), TWO_FILE);
    // A plain (native) object passes through: its MPI call is not in the tree.
    ok(
        &dir,
        "mpicc.openmpi",
        &["-c", &program("halo2.c"), "-o", "native.o"],
    );
    build(
        &dir,
        &["cc", &program("main2.c"), "native.o", "-o", "with_native"],
    );
    assert_eq!(
        shape(&tree(&dir, "with_native")),
        "root{MPI_Init,MPI_Comm_rank,MPI_Comm_size,MPI_Allreduce,MPI_Finalize}"
    );
}

/// A program linked from its own static library only (as HPCC links `libhpl.a`), with the
/// member a later member needs stored first: the link roots at the member defining `main`
/// and takes every member needed, whatever their order in the archive.
#[test]
fn program_all_in_a_static_archive() {
    let dir = scratch("all_in_archive");
    build(&dir, &["cc", "-c", &program("halo2.c"), "-o", "halo2.o"]);
    build(&dir, &["cc", "-c", &program("main2.c"), "-o", "main2.o"]);
    ok(&dir, "ar", &["rcs", "libprog.a", "halo2.o", "main2.o"]);
    build(&dir, &["cc", "libprog.a", "-o", "all_in_lib"]);
    assert_eq!(shape(&tree(&dir, "all_in_lib")), TWO_FILE);
}

#[test]
fn text_form_is_indented_with_ids_and_lines() {
    let dir = scratch("text");
    build(&dir, &["cc", &program("fig8.c"), "-o", "fig8"]);
    let out = conifer_static(&dir, &["tree", "fig8"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "0 root");
    assert!(
        lines[3].starts_with("  3 loop foo ") && lines[3].ends_with("fig8.c:10"),
        "{text}"
    );
    assert!(lines[4].starts_with("    4 branch "), "{text}");
    assert!(
        lines[5].starts_with("      5 mpi MPI_Bcast ") && lines[5].ends_with("fig8.c:13"),
        "{text}"
    );
}

#[test]
fn arm_on_a_shared_block_gets_its_own_edge() {
    // Regression: the hook on a split edge once took the debug location of another function,
    // which the verifier rejects.
    let dir = scratch("shortcircuit");
    build(&dir, &["cc", "-g", &program("shortcircuit.c"), "-o", "sc"]);
    assert_eq!(
        shape(&tree(&dir, "sc")),
        "root{MPI_Init,MPI_Comm_rank,loop{branch{MPI_Barrier}},MPI_Finalize}"
    );
}
