//! Generates Rust declarations of the OTF2 writer API from the installed headers (Debian
//! `libotf2-trace-dev` / `libopen-trace-format2-dev`) and links libotf2.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let (lib, include) = match std::process::Command::new("pkg-config")
        .args(["--libs-only-l", "--cflags-only-I", "otf2"])
        .output()
    {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let lib = text
                .split_whitespace()
                .find_map(|w| w.strip_prefix("-l"))
                .unwrap_or("otf2")
                .to_string();
            let include: Vec<String> = text
                .split_whitespace()
                .filter(|w| w.starts_with("-I"))
                .map(str::to_string)
                .collect();
            (lib, include)
        }
        _ => ("otf2".to_string(), Vec::new()),
    };
    println!("cargo:rustc-link-lib={lib}");
    let bindings = bindgen::Builder::default()
        .header_contents("conifer_otf2.h", "#include <otf2/otf2.h>\n")
        .clang_args(include)
        .allowlist_function("OTF2_Archive_.*")
        .allowlist_function("OTF2_EvtWriter_.*")
        .allowlist_function("OTF2_GlobalDefWriter_.*")
        .allowlist_function("OTF2_Error_GetName")
        .allowlist_function("OTF2_Error_GetDescription")
        .allowlist_function("OTF2_Error_RegisterCallback")
        .allowlist_type("OTF2_.*")
        .allowlist_var("OTF2_.*")
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .layout_tests(false)
        .generate_comments(false)
        .generate()
        .unwrap_or_else(|e| {
            panic!(
                "bindgen could not read <otf2/otf2.h> ({e}): install libotf2-trace-dev \
                 (scripts/setup.sh does)"
            )
        });
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    bindings
        .write_to_file(out.join("otf2_bindings.rs"))
        .expect("write otf2_bindings.rs");
}
