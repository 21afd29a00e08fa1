//! Which functions a recording may leave out: `conifer run --exclude` (`CONIFER_EXCLUDE`)
//! takes MPI function names and the class `queries`; the run's start and end and
//! `MPI_Pcontrol`, which switches recording off and on, are always recorded.

use crate::FUNCTION_NAMES;

/// Local queries that programs make very often and that carry no communication: the
/// functions the class `queries` stands for.
pub const QUERIES: &[&str] = &[
    "MPI_Wtime",
    "MPI_Wtick",
    "MPI_Comm_rank",
    "MPI_Comm_size",
    "MPI_Comm_remote_size",
    "MPI_Comm_test_inter",
    "MPI_Group_rank",
    "MPI_Group_size",
    "MPI_Initialized",
    "MPI_Finalized",
    "MPI_Query_thread",
    "MPI_Is_thread_main",
    "MPI_Get_version",
    "MPI_Get_library_version",
    "MPI_Get_processor_name",
    "MPI_Type_size",
    "MPI_Type_get_extent",
    "MPI_Type_get_true_extent",
    "MPI_Get_count",
    "MPI_Get_elements",
    "MPI_Topo_test",
    "MPI_Cartdim_get",
    "MPI_Cart_get",
    "MPI_Cart_coords",
    "MPI_Cart_rank",
];

/// Functions recorded whatever the user asks: the run's start and end, and the switch itself.
pub const ALWAYS_RECORDED: &[&str] = &[
    "MPI_Init",
    "MPI_Init_thread",
    "MPI_Finalize",
    "MPI_Pcontrol",
];

/// The functions (C spelling) one item of an exclusion list stands for: a function name in
/// any case, or `queries`; an error saying why for anything else.
pub fn excluded_by(item: &str) -> Result<Vec<&'static str>, String> {
    if item.eq_ignore_ascii_case("queries") {
        return Ok(QUERIES.to_vec());
    }
    let Some(name) = FUNCTION_NAMES.iter().find(|n| n.eq_ignore_ascii_case(item)) else {
        return Err(format!(
            "{item} is not an MPI function (give names such as MPI_Wtime, or the class `queries`)"
        ));
    };
    if ALWAYS_RECORDED.contains(name) {
        return Err(format!("{name} is always recorded and cannot be excluded"));
    }
    Ok(vec![name])
}

/// The functions (C spelling) a comma-separated exclusion list stands for (empty items
/// skipped), and why each item it refuses was refused.
pub fn excluded_functions(list: &str) -> (Vec<&'static str>, Vec<String>) {
    let (mut functions, mut refused) = (Vec::new(), Vec::new());
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match excluded_by(item) {
            Ok(named) => functions.extend(named),
            Err(why) => refused.push(why),
        }
    }
    (functions, refused)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_any_case_and_the_queries_class() {
        assert_eq!(excluded_by("mpi_wtime"), Ok(vec!["MPI_Wtime"]));
        assert!(excluded_by("queries").unwrap().contains(&"MPI_Comm_rank"));
        assert!(
            QUERIES.iter().all(|q| FUNCTION_NAMES.contains(q)),
            "a query is misspelt"
        );
    }

    #[test]
    fn a_list_skips_empty_items_and_says_why_it_refuses_others() {
        let (functions, refused) = excluded_functions("MPI_Send, ,mpi_nonsense,");
        assert_eq!(functions, vec!["MPI_Send"]);
        assert_eq!(refused.len(), 1);
        assert!(refused[0].starts_with("mpi_nonsense is not an MPI function"));
    }

    #[test]
    fn unknown_and_always_recorded_names_are_refused() {
        assert!(excluded_by("MPI_Nonsense")
            .unwrap_err()
            .contains("not an MPI function"));
        assert!(excluded_by("MPI_Pcontrol")
            .unwrap_err()
            .contains("always recorded"));
    }
}
