//! Running LLVM pass pipelines on a module (the new pass manager, a generic host target).

use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{CodeModel, InitializationConfig, RelocMode, Target, TargetMachine};
use inkwell::OptimizationLevel;

/// Runs an LLVM pass pipeline on `module`.
pub fn run(module: &Module, pipeline: &str) -> Result<(), String> {
    Target::initialize_native(&InitializationConfig::default())?;
    let triple = TargetMachine::get_default_triple();
    let target = Target::from_triple(&triple).map_err(|e| e.to_string())?;
    let machine = target
        .create_target_machine(
            &triple,
            "generic",
            "",
            OptimizationLevel::None,
            RelocMode::Default,
            CodeModel::Default,
        )
        .ok_or("cannot create a target machine for this host")?;
    module
        .run_passes(pipeline, &machine, PassBuilderOptions::create())
        .map_err(|e| format!("{pipeline} failed: {e}"))
}
