//! The whole-program step of the link: read the linked bitcode, normalise loops, build the
//! structure tree, instrument, embed the tree, write the bitcode back.

use crate::instrument::Instrumenter;
use crate::inter::Program;
use crate::ir;
use crate::slice::{self, report::Report};
use crate::tree::{self, Vertex};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::types::AsTypeRef;
use inkwell::values::{AsValueRef, BasicValue};
use inkwell::AddressSpace;
use llvm_sys::core as llc;
use std::collections::VecDeque;
use std::path::Path;

/// ELF section holding the tree (JSON).
pub const SECTION: &str = ".conifer_tree";

/// Symbols that can be the program's entry, in order of preference (C `main`, flang's main
/// program).
const ENTRIES: [&str; 2] = ["main", "_QQmain"];

/// What the analysis of one program produced.
pub struct Outcome {
    /// The tree.
    pub tree: Vertex,
    /// Hook calls inserted.
    pub hooks: usize,
    /// What slicing did, when asked for.
    pub slice: Option<Report>,
}

/// Analyses and instruments `input` (linked bitcode), writing `output` (bitcode); with
/// `slice`, also slices it (FACT) after instrumenting it.
pub fn run(input: &Path, output: &Path, slice: bool) -> Result<Outcome, String> {
    let context = Context::create();
    let module = Module::parse_bitcode_from_path(input, &context)
        .map_err(|e| format!("cannot read bitcode {}: {e}", input.display()))?;
    normalise(&module)?;
    let functions = ir::functions(&module);
    let mut program = Program::new(&functions);
    let entry = ENTRIES.iter().find_map(|e| program.index(e));
    let mut instrumenter = Instrumenter::new(&context, &module);
    let forest = match entry {
        Some(entry) => {
            program.expand(entry);
            // Instrument the functions whose trees are in the program tree.
            let mut queue = VecDeque::from([entry]);
            let mut done = vec![false; functions.len()];
            while let Some(f) = queue.pop_front() {
                if std::mem::replace(&mut done[f], true) {
                    continue;
                }
                let expanded = program.expanded[f].as_ref().expect("expanded");
                if expanded.forest.is_empty() {
                    continue;
                }
                instrumenter.function(&functions[f], &program.analyses[f], expanded);
                queue.extend(
                    expanded
                        .spliced
                        .iter()
                        .filter_map(|(_, g)| program.index(g)),
                );
            }
            program.expanded[entry]
                .as_ref()
                .expect("expanded")
                .forest
                .clone()
        }
        None => Vec::new(),
    };
    let tree = tree::finish(&forest);
    let hooks = instrumenter.inserted;
    let entry_name = entry.map(|e| functions[e].name.clone());
    drop(instrumenter);
    drop(program);
    drop(functions);
    let report = match slice {
        true => {
            crate::passes::run(&module, "function(sroa)")?;
            let report = slice::run(&module, entry_name.as_deref());
            let json = serde_json::to_string(&report).expect("report serialises");
            embed(
                &context,
                &module,
                &json,
                "conifer_slice_report",
                slice::report::SECTION,
            );
            Some(report)
        }
        false => None,
    };
    let json = serde_json::to_string(&tree).expect("tree serialises");
    embed(&context, &module, &json, "conifer_structure_tree", SECTION);
    module
        .verify()
        .map_err(|e| format!("internal error: instrumented module is invalid: {e}"))?;
    if !module.write_bitcode_to_path(output) {
        return Err(format!("cannot write {}", output.display()));
    }
    Ok(Outcome {
        tree,
        hooks,
        slice: report,
    })
}

/// Lets loop passes run on `-O0` code (drops `optnone`) and puts loops in the form the
/// instrumentation relies on (preheaders, one back edge, dedicated exits).
fn normalise(module: &Module) -> Result<(), String> {
    let optnone = Attribute::get_named_enum_kind_id("optnone");
    for f in module.get_functions() {
        if f.get_enum_attribute(AttributeLoc::Function, optnone)
            .is_some()
        {
            f.remove_enum_attribute(AttributeLoc::Function, optnone);
        }
    }
    crate::passes::run(module, "function(loop-simplify)")
}

/// Adds `json` as global `name` (NUL-terminated) in section `section`, kept by `llvm.used`.
fn embed<'ctx>(
    context: &'ctx Context,
    module: &Module<'ctx>,
    json: &str,
    name: &str,
    section: &str,
) {
    let data = context.const_string(json.as_bytes(), true);
    let global = module.add_global(data.get_type(), None, name);
    global.set_initializer(&data);
    global.set_constant(true);
    global.set_linkage(Linkage::Private);
    global.set_section(Some(section));
    let ptr = context.ptr_type(AddressSpace::default());
    // SAFETY: reading and replacing the `llvm.used` array through the C API.
    unsafe {
        let mut used: Vec<_> = Vec::new();
        if let Some(old) = module.get_global("llvm.used") {
            let init = llc::LLVMGetInitializer(old.as_value_ref());
            if !init.is_null() {
                for i in 0..llc::LLVMGetNumOperands(init) {
                    used.push(llc::LLVMGetOperand(init, i as u32));
                }
            }
            old.delete();
        }
        used.push(
            global
                .as_pointer_value()
                .as_basic_value_enum()
                .as_value_ref(),
        );
        let array = llc::LLVMConstArray2(ptr.as_type_ref(), used.as_mut_ptr(), used.len() as u64);
        let new = llc::LLVMAddGlobal(
            module.as_mut_ptr(),
            llc::LLVMTypeOf(array),
            c"llvm.used".as_ptr(),
        );
        llc::LLVMSetInitializer(new, array);
        llc::LLVMSetLinkage(new, llvm_sys::LLVMLinkage::LLVMAppendingLinkage);
        llc::LLVMSetSection(new, c"llvm.metadata".as_ptr());
    }
}

/// Reads the slicing report embedded in an executable built with `--slice`, if any.
pub fn read_slice(binary: &Path) -> Result<Option<Report>, String> {
    use object::{Object, ObjectSection};
    let bytes =
        std::fs::read(binary).map_err(|e| format!("cannot read {}: {e}", binary.display()))?;
    let file = object::File::parse(&*bytes)
        .map_err(|_| format!("{} is not an executable or object file", binary.display()))?;
    let Some(section) = file.section_by_name(slice::report::SECTION) else {
        return Ok(None);
    };
    let data = section.data().map_err(|e| {
        format!(
            "cannot read the slicing report in {}: {e}",
            binary.display()
        )
    })?;
    let json = data.split(|&b| b == 0).next().unwrap_or_default();
    serde_json::from_slice(json)
        .map(Some)
        .map_err(|e| format!("corrupt slicing report in {}: {e}", binary.display()))
}

/// Reads the tree embedded in an executable.
pub fn read(binary: &Path) -> Result<Vertex, String> {
    use object::{Object, ObjectSection};
    let bytes =
        std::fs::read(binary).map_err(|e| format!("cannot read {}: {e}", binary.display()))?;
    let file = object::File::parse(&*bytes)
        .map_err(|_| format!("{} is not an executable or object file", binary.display()))?;
    let section = file.section_by_name(SECTION).ok_or_else(|| {
        format!(
            "{} has no structure tree (build it with `conifer cc`, `cxx` or `fc`)",
            binary.display()
        )
    })?;
    let data = section
        .data()
        .map_err(|e| format!("cannot read the tree in {}: {e}", binary.display()))?;
    let json = data.split(|&b| b == 0).next().unwrap_or_default();
    serde_json::from_slice(json)
        .map_err(|e| format!("corrupt structure tree in {}: {e}", binary.display()))
}
