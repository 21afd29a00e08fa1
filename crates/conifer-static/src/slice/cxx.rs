//! The C++ standard library as the slicer sees it (libstdc++'s Itanium-mangled names).
//! Its templates are instantiated in the program (a `std::vector`'s members and allocator
//! are analysed as the program's own code); what the library itself defines — iostreams,
//! `std::string`'s members (explicitly instantiated in the library, their bodies in the module
//! only `available_externally`, [`super::ir`]), the exception runtime — is summarised here:
//! formatted output reads its arguments and writes the stream's own state, never the
//! program's arrays; a string member reads what its arguments reach and writes its own string
//! (`this`, or the result a free function returns through its first parameter).

use super::class::External;
use llvm_sys::core as llc;
use llvm_sys::prelude::LLVMModuleRef;
use llvm_sys::LLVMLinkage;

/// Members of `std::ostream` (`_ZNSo`), `std::basic_ios`, `std::ios_base`, the `ctype`
/// facet output widens through, and the free output functions and manipulators.
const STREAM_OUTPUT: [&str; 11] = [
    "_ZNSo",
    "_ZNKSo",
    "_ZNSt9basic_iosIcSt11char_traitsIcEE",
    "_ZNKSt9basic_iosIcSt11char_traitsIcEE",
    "_ZNSt8ios_base",
    "_ZNKSt8ios_base",
    "_ZNKSt5ctypeIcE",
    "_ZSt4endlIcSt11char_traitsIcEE",
    "_ZSt5flushIcSt11char_traitsIcEE",
    "_ZSt16__ostream_insertIcSt11char_traitsIcEE",
    "_ZSt13__check_facetISt5ctypeIcEE",
];

/// `std::string`'s members, and the free functions returning a new string through their
/// first parameter (`operator+`, `std::to_string`).
const STRINGS: [&str; 4] = [
    "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE",
    "_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE",
    "_ZStplIcSt11char_traitsIcESaIcEE",
    "_ZNSt7__cxx119to_string",
];

/// The exception runtime's calls that only touch the exception's own memory, and
/// `std::allocator<char>`'s empty constructor and destructor.
const PURE: [&str; 6] = [
    "__cxa_begin_catch",
    "__cxa_end_catch",
    "_ZNSaIcEC1Ev",
    "_ZNSaIcEC2Ev",
    "_ZNSaIcED1Ev",
    "_ZNSaIcED2Ev",
];

/// Calls that never return (`std::__throw_length_error`, `__cxa_throw`, `std::terminate`)
/// and `__cxa_atexit`, registering a static object's destructor to run after `main` returns
/// (when MPI is finalised): they change no memory the program reads afterwards.
fn no_effect(name: &str) -> bool {
    name.starts_with("_ZSt") && name.contains("__throw_")
        || matches!(
            name,
            "__cxa_throw"
                | "__cxa_rethrow"
                | "_ZSt9terminatev"
                | "__cxa_pure_virtual"
                | "__cxa_atexit"
        )
}

/// The class of C++ library function `name`, if it is one the slicer summarises.
pub fn classify(name: &str) -> Option<External> {
    // Constructing the standard streams (a static object of every file including
    // <iostream>, with GCC 12's headers) stays: output kept later needs them.
    if name.starts_with("_ZNSt8ios_base4InitC") {
        return None;
    }
    if STREAM_OUTPUT.iter().any(|p| name.starts_with(p))
        || (name.starts_with("_ZStls") && name.contains("basic_ostream"))
    {
        Some(External::StreamOutput)
    } else if STRINGS.iter().any(|p| name.starts_with(p)) {
        Some(External::StringMember)
    } else if PURE.contains(&name) || no_effect(name) {
        Some(External::Pure)
    } else if name == "__cxa_allocate_exception" {
        Some(External::Allocates)
    } else if name == "__cxa_free_exception" {
        Some(External::Frees)
    } else {
        None
    }
}

/// Turns the module's `available_externally` functions (bodies of library functions given
/// only for inlining, as clang does at `-O2` for `extern template`s like `std::endl`) into
/// declarations: the slice calls the library's own, which these summaries describe, and no
/// such body calls into code the slice removed.
pub fn declare_library_bodies(module: LLVMModuleRef) {
    // SAFETY: walking and editing the function list of a live module; a body is deleted only
    // from a function the module defines available externally, which the linker never emits.
    unsafe {
        let mut f = llc::LLVMGetFirstFunction(module);
        while !f.is_null() {
            if llc::LLVMCountBasicBlocks(f) > 0
                && llc::LLVMGetLinkage(f) == LLVMLinkage::LLVMAvailableExternallyLinkage
            {
                let mut b = llc::LLVMGetFirstBasicBlock(f);
                while !b.is_null() {
                    let mut i = llc::LLVMGetFirstInstruction(b);
                    while !i.is_null() {
                        llc::LLVMReplaceAllUsesWith(i, llc::LLVMGetPoison(llc::LLVMTypeOf(i)));
                        i = llc::LLVMGetNextInstruction(i);
                    }
                    b = llc::LLVMGetNextBasicBlock(b);
                }
                while !llc::LLVMGetFirstBasicBlock(f).is_null() {
                    llc::LLVMDeleteBasicBlock(llc::LLVMGetFirstBasicBlock(f));
                }
                if llc::LLVMHasPersonalityFn(f) != 0 {
                    llc::LLVMSetPersonalityFn(f, std::ptr::null_mut());
                }
                llvm_sys::debuginfo::LLVMSetSubprogram(f, std::ptr::null_mut());
                llc::LLVMSetLinkage(f, LLVMLinkage::LLVMExternalLinkage);
            }
            f = llc::LLVMGetNextFunction(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_strings_and_the_exception_runtime() {
        let out = Some(External::StreamOutput);
        assert_eq!(classify("_ZNSolsEd"), out);
        assert_eq!(
            classify("_ZSt4endlIcSt11char_traitsIcEERSt13basic_ostreamIT_T0_ES6_"),
            out
        );
        assert_eq!(
            classify("_ZStlsISt11char_traitsIcEERSt13basic_ostreamIcT_ES5_PKc"),
            out
        );
        assert_eq!(
            classify("_ZNSt9basic_iosIcSt11char_traitsIcEE5clearESt12_Ios_Iostate"),
            out
        );
        assert_eq!(
            classify("_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE6insertEmPKc"),
            Some(External::StringMember)
        );
        assert_eq!(classify("__cxa_begin_catch"), Some(External::Pure));
        assert_eq!(
            classify("_ZSt20__throw_length_errorPKc"),
            Some(External::Pure)
        );
        // Input writes what the program reads: not summarised (kept).
        assert_eq!(classify("_ZNSirsERi"), None);
        assert_eq!(classify("_ZNSt6vectorIdSaIdEE6resizeEm"), None);
    }
}
