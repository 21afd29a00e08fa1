//! `conifer cc --slice`: the slicing report embedded in the binary says what was kept and
//! which MPI calls are marked, the sliced programs run, and computation that no
//! communication argument depends on is gone.

mod common;
use common::*;
use serde_json::Value;

/// Builds `source` with `--slice` and returns its slicing report.
fn sliced(test: &str, source: &str, binary: &str, extra: &[&str]) -> (std::path::PathBuf, Value) {
    let dir = scratch(test);
    let mut args = vec!["cc", "--slice", "-O2", source, "-o", binary];
    args.extend(extra);
    build(&dir, &args);
    let report = tree(&dir, binary)["slice"].clone();
    assert!(report.is_object(), "{binary} has no slicing report");
    (dir, report)
}

/// A shared object defining `conifer_slice_skip` as doing nothing, built in `dir`: preloaded,
/// a sliced program runs with every MPI call executed (as under Conifer skipping nothing).
fn skip_stub(dir: &std::path::Path) -> std::path::PathBuf {
    let source = dir.join("skip_stub.c");
    std::fs::write(&source, "void conifer_slice_skip(void) {}\n").expect("write the stub");
    let library = dir.join("libskipstub.so");
    ok(
        dir,
        "clang-19",
        &[
            "-shared",
            "-fPIC",
            source.to_str().unwrap(),
            "-o",
            library.to_str().unwrap(),
        ],
    );
    library
}

/// Runs `binary ARGS` on `ranks` Open MPI ranks with [`skip_stub`] preloaded; it must exit 0
/// (a sliced program prints nothing: its output statements are not in the slice).
fn runs(dir: &std::path::Path, ranks: u32, binary: &str, args: &[&str]) {
    let preload = format!("LD_PRELOAD={}", skip_stub(dir).display());
    let mut with_env = vec![preload.as_str(), binary];
    with_env.extend(args);
    mpirun_output(dir, "openmpi", ranks, "env", &with_env);
}

fn site<'a>(report: &'a Value, function: &str) -> Vec<&'a Value> {
    report["sites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["function"] == function)
        .collect()
}

fn fraction(report: &Value) -> f64 {
    report["kept"].as_f64().unwrap() / report["instructions"].as_f64().unwrap()
}

#[test]
fn ring_keeps_the_ring_and_drops_the_reference_computation() {
    let (dir, report) = sliced("slice_ring", &app("ring.c"), "ring", &[]);
    // The message contents feed nothing the communication depends on: the exchange is
    // recorded only; rank and size queries always execute.
    let sendrecv = site(&report, "MPI_Sendrecv");
    assert_eq!(sendrecv.len(), 1);
    assert_eq!(sendrecv[0]["marked"], false);
    assert_eq!(site(&report, "MPI_Comm_rank")[0]["marked"], true);
    assert!(fraction(&report) < 0.8, "{report}");
    assert!(report["lines_removed"].as_u64().unwrap() > 20, "{report}");
    assert!(report["caveats"].as_array().unwrap().is_empty(), "{report}");
    // With every call executed the sliced program still runs.
    runs(&dir, 3, "./ring", &["5"]);
}

/// Run without Conifer, a sliced program would compute nothing and look as if it ran: it says
/// on stderr that it must be traced and exits with status 3, before `MPI_Init`.
#[test]
fn a_sliced_program_run_without_conifer_says_so_and_fails() {
    let (dir, _) = sliced("slice_plain", &app("ring.c"), "ring", &[]);
    let out = std::process::Command::new(dir.join("ring"))
        .arg("5")
        .current_dir(&dir)
        .output()
        .expect("run the sliced program");
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("built with --slice") && stderr.contains("conifer run"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "{out:?}");
}

#[test]
fn stencil_computation_is_removed_but_its_loop_bounds_stay() {
    let (dir, report) = sliced("slice_stencil", &app("stencil2d.c"), "st", &["-lm"]);
    for f in ["MPI_Irecv", "MPI_Isend", "MPI_Allreduce"] {
        assert_eq!(site(&report, f)[0]["marked"], false, "{f}: {report}");
    }
    // Waitall always executes (it completes the requests the runtime made up).
    assert_eq!(site(&report, "MPI_Waitall")[0]["marked"], true);
    let emptied: Vec<&str> = report["functions_emptied"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(emptied.contains(&"init_val"), "{emptied:?}");
    assert!(fraction(&report) < 0.6, "{report}");
    runs(&dir, 4, "./st", &["3"]);
}

#[test]
fn received_values_that_steer_communication_mark_the_calls() {
    // waitany's completion order decides what it sends next: everything executes.
    let (_, report) = sliced("slice_waitany", &app("waitany.c"), "wa", &[]);
    for s in report["sites"].as_array().unwrap() {
        assert_eq!(s["marked"], true, "{s}");
    }
}

/// Fortran calls are sliced like C ones: ring.f90's `MPI_SENDRECV` passes on what it received,
/// which only the final check (after `MPI_FINALIZE`) reads, so it is unmarked; everything
/// else is marked (queries, `MPI_INIT`, `MPI_FINALIZE`).
#[test]
fn fortran_calls_are_sliced_like_c_ones() {
    let dir = scratch("slice_fortran");
    build(
        &dir,
        &["fc", "--slice", "-O2", &app("ring.f90"), "-o", "ring_f"],
    );
    let report = tree(&dir, "ring_f")["slice"].clone();
    let sites = report["sites"].as_array().unwrap();
    assert_eq!(sites.len(), 5, "{report}");
    for s in sites {
        let unmarked = s["function"] == "MPI_Sendrecv";
        assert_eq!(s["marked"], !unmarked, "{s}");
    }
    runs(&dir, 3, "./ring_f", &["5"]);
}

/// A message whose count is the length of a line formatted by a variadic function: the
/// count is live, so `vsnprintf` is, and so is the `va_start` that fills the list it reads.
const VARIADIC_COUNT: &str = r#"
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>

static int format(char *line, size_t room, const char *form, ...) {
  va_list args;
  va_start(args, form);
  int n = vsnprintf(line, room, form, args);
  va_end(args);
  return n;
}

int main(int argc, char **argv) {
  int rank, size;
  char line[64];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = format(line, sizeof line, "rank %d of %d", rank, size);
  if (rank == 0) {
    MPI_Send(line, n, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Status status;
    int got;
    MPI_Recv(line, (int)sizeof line, MPI_CHAR, 0, 0, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_CHAR, &got);
    if (got != 11) MPI_Abort(MPI_COMM_WORLD, 3); /* "rank 0 of 2" */
  }
  MPI_Finalize();
  return 0;
}
"#;

#[test]
fn a_variadic_function_feeding_a_count_keeps_its_argument_list() {
    let dir = scratch("slice_variadic");
    std::fs::write(dir.join("variadic.c"), VARIADIC_COUNT).expect("write the source");
    build(
        &dir,
        &["cc", "--slice", "-O2", "variadic.c", "-o", "variadic"],
    );
    runs(&dir, 2, "./variadic", &[]);
}

/// A check of received data that ends the run with `exit(1)`: `CHECK_AT` places it before (0)
/// or after (1) `MPI_Finalize`; 2 ends the run with an unconditional `exit(0)` after it.
const EXIT_CHECK: &str = r#"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int rank, size, got = -1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT,
               (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  int bad = got != (rank + size - 1) % size;
#if CHECK_AT == 0
  if (bad) exit(1);
#endif
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
#if CHECK_AT == 1
  if (bad) {
    printf("rank %d got %d\n", rank, got);
    exit(1);
  }
#endif
#if CHECK_AT == 2
  exit(0);
#endif
  return 0;
}
"#;

/// A run that succeeds reaches `MPI_Finalize`: an `exit` before it ends only a failed run (an
/// MPI program exiting unfinalised is erroneous) and once MPI is finalised nothing more is
/// recorded, so the check deciding either is removed and the receive whose data it checks is
/// recorded only. An `exit` the program always reaches after `MPI_Finalize` stays (removed,
/// the program would run into `unreachable`): the sliced programs run and exit 0.
#[test]
fn exits_do_not_keep_the_checks_deciding_them() {
    let dir = scratch("slice_exit_check");
    std::fs::write(dir.join("check.c"), EXIT_CHECK).expect("write the source");
    for at in ["0", "1", "2"] {
        let binary = format!("check{at}");
        let define = format!("-DCHECK_AT={at}");
        build(
            &dir,
            &["cc", "--slice", "-O2", &define, "check.c", "-o", &binary],
        );
        let report = tree(&dir, &binary)["slice"].clone();
        assert_eq!(
            site(&report, "MPI_Sendrecv")[0]["marked"],
            false,
            "check at {at}: {report}"
        );
        assert_eq!(site(&report, "MPI_Barrier")[0]["marked"], false, "{report}");
        runs(&dir, 2, &format!("./{binary}"), &[]);
    }
}

/// The input deck of a transport code in 16 lines: the loop count comes from a named file,
/// so the `READ` is in the slice and with it the `OPEN` before it (the unit's state), or the
/// read hits the end of an empty `fort.3`; the `CLOSE` after it too.
const DECK_F: &str = "program deck
  implicit none
  include 'mpif.h'
  integer :: n, i, ierr, rank, total
  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  open(unit=3, file='deck.txt', status='old')
  read(3, *) n
  close(3)
  write(*, *) 'iterations', n
  do i = 1, n
    call mpi_allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  call mpi_finalize(ierr)
end program deck
";

/// The same in C, with `fopen`/`fscanf`/`fclose`.
const DECK_C: &str = r#"
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int n = 0, rank, total;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  FILE *deck = fopen("deck.txt", "r");
  if (!deck || fscanf(deck, "%d", &n) != 1) MPI_Abort(MPI_COMM_WORLD, 2);
  fclose(deck);
  printf("iterations %d\n", n);
  for (int i = 0; i < n; i++)
    MPI_Allreduce(&rank, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
"#;

/// Statements a kept statement depends on through the runtime's state stay: the sliced deck
/// readers run (on a deck holding 3; a `READ` without its `OPEN` would end the Fortran one
/// with "End of file"), and the reduction, whose result nothing reads, is recorded only.
#[test]
fn reading_an_input_deck_keeps_the_open_before_the_read() {
    let dir = scratch("slice_deck");
    std::fs::write(dir.join("deck.f90"), DECK_F).expect("write the source");
    std::fs::write(dir.join("deck.c"), DECK_C).expect("write the source");
    std::fs::write(dir.join("deck.txt"), "3\n").expect("write the deck");
    build(&dir, &["fc", "--slice", "-O2", "deck.f90", "-o", "deck_f"]);
    build(&dir, &["cc", "--slice", "-O2", "deck.c", "-o", "deck_c"]);
    for binary in ["deck_f", "deck_c"] {
        let report = tree(&dir, binary)["slice"].clone();
        assert_eq!(
            site(&report, "MPI_Allreduce")[0]["marked"],
            false,
            "{report}"
        );
        runs(&dir, 2, &format!("./{binary}"), &[]);
    }
}

/// A configuration struct in a global, as C codes keep one: its `count` field is a
/// communication argument, its `norm` field is computed by a routine from a `malloc`ed
/// temporary no MPI call sees.
const FIELDS_C: &str = r#"
#include <mpi.h>
#include <stdlib.h>

struct state { int count; int pad; double norm; double *work; };
struct state st;

__attribute__((noinline)) static double norm_of(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return s;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  st.count = argc > 1 ? atoi(argv[1]) : 4;
  double *tmp = malloc(1000 * sizeof *tmp);
  for (int i = 0; i < 1000; i++) tmp[i] = i;
  st.norm = norm_of(tmp, 1000);
  free(tmp);
  double *out = malloc(8 * sizeof *out), in[8] = {0};
  in[0] = st.norm;
  MPI_Allreduce(in, out, st.count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  free(out);
  MPI_Finalize();
  return 0;
}
"#;

/// Fields of one global are told apart: reading `st.count` for the reduction's count does
/// not keep the store to `st.norm`, so `norm_of` and the temporary's loop go (before, the
/// whole struct was one object and they stayed), and freeing memory no MPI call sees is no
/// reason to keep it. The sliced program runs.
#[test]
fn fields_of_a_global_struct_are_told_apart() {
    let dir = scratch("slice_fields");
    std::fs::write(dir.join("fields.c"), FIELDS_C).expect("write the source");
    build(&dir, &["cc", "--slice", "-O2", "fields.c", "-o", "fields"]);
    let report = tree(&dir, "fields")["slice"].clone();
    let emptied: Vec<&str> = report["functions_emptied"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f.as_str())
        .collect();
    assert!(emptied.contains(&"norm_of"), "{report}");
    assert_eq!(
        site(&report, "MPI_Allreduce")[0]["marked"],
        false,
        "{report}"
    );
    assert!(report["caveats"].as_array().unwrap().is_empty(), "{report}");
    runs(&dir, 2, "./fields", &["3"]);
}
