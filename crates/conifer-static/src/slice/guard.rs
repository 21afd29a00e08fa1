//! A sliced program only makes sense traced: most of its computation is gone and its unmarked
//! MPI calls are meant to be recorded, not executed. [`insert`] makes the program's entry
//! first check that libconifer is loaded (the weak `conifer_slice_skip` is defined); when it
//! is not, the program says so on stderr and exits with status [`STATUS`] before doing
//! anything else.

use llvm_sys::core as llc;
use llvm_sys::prelude::{LLVMContextRef, LLVMModuleRef, LLVMValueRef};

/// The exit status of a sliced program run without Conifer.
pub const STATUS: i32 = 3;

/// What a sliced program run without Conifer prints.
const MESSAGE: &str = "conifer: this program was built with --slice (its computation is \
removed): run it under `conifer run` or `conifer exec` to record its trace\n";

/// Makes `entry` start with the check. `skip` is the weak `conifer_slice_skip` declaration.
///
/// # Safety
/// `context`, `module`, `entry` and `skip` are live and belong together; `entry` has a body.
pub unsafe fn insert(
    context: LLVMContextRef,
    module: LLVMModuleRef,
    entry: LLVMValueRef,
    skip: LLVMValueRef,
) {
    let i32t = llc::LLVMInt32TypeInContext(context);
    let i64t = llc::LLVMInt64TypeInContext(context);
    let ptr = llc::LLVMPointerTypeInContext(context, 0);
    let void = llc::LLVMVoidTypeInContext(context);
    let mut write_params = [i32t, ptr, i64t];
    let write_ty = llc::LLVMFunctionType(i64t, write_params.as_mut_ptr(), 3, 0);
    let write = declare(module, c"write", write_ty);
    let mut exit_params = [i32t];
    let exit_ty = llc::LLVMFunctionType(void, exit_params.as_mut_ptr(), 1, 0);
    let exit = declare(module, c"_exit", exit_ty);

    let first = llc::LLVMGetEntryBasicBlock(entry);
    let check = llc::LLVMInsertBasicBlockInContext(context, first, c"conifer.guard".as_ptr());
    let fail = llc::LLVMInsertBasicBlockInContext(context, first, c"conifer.unsliced".as_ptr());
    let b = llc::LLVMCreateBuilderInContext(context);
    llc::LLVMPositionBuilderAtEnd(b, check);
    let present = llc::LLVMBuildIsNotNull(b, skip, c"traced".as_ptr());
    llc::LLVMBuildCondBr(b, present, first, fail);
    llc::LLVMPositionBuilderAtEnd(b, fail);
    let text = llc::LLVMBuildGlobalStringPtr(
        b,
        std::ffi::CString::new(MESSAGE).expect("no NUL").as_ptr(),
        c"conifer.sliced.message".as_ptr(),
    );
    let mut args = [
        llc::LLVMConstInt(i32t, 2, 0),
        text,
        llc::LLVMConstInt(i64t, MESSAGE.len() as u64, 0),
    ];
    llc::LLVMBuildCall2(b, write_ty, write, args.as_mut_ptr(), 3, c"".as_ptr());
    let mut status = [llc::LLVMConstInt(i32t, STATUS as u64, 0)];
    llc::LLVMBuildCall2(b, exit_ty, exit, status.as_mut_ptr(), 1, c"".as_ptr());
    llc::LLVMBuildUnreachable(b);
    llc::LLVMDisposeBuilder(b);
}

/// The function `name` of `module`, declared with `ty` when it is not there yet.
unsafe fn declare(
    module: LLVMModuleRef,
    name: &std::ffi::CStr,
    ty: llvm_sys::prelude::LLVMTypeRef,
) -> LLVMValueRef {
    let existing = llc::LLVMGetNamedFunction(module, name.as_ptr());
    match existing.is_null() {
        true => llc::LLVMAddFunction(module, name.as_ptr(), ty),
        false => existing,
    }
}
