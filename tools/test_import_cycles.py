#!/usr/bin/env python3
"""Tests of import-cycles.py on tiny fake crates made in a temporary directory."""

import importlib.util
import io
import os
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = importlib.util.spec_from_file_location("import_cycles", os.path.join(HERE, "import-cycles.py"))
ic = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(ic)


def make(root, files):
    for rel, text in files.items():
        path = os.path.join(root, "crates", "fake", rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def run(files, allowed=frozenset()):
    with tempfile.TemporaryDirectory() as root:
        make(root, files)
        out = io.StringIO()
        failing = ic.check(root, None, allowed, out)
        return failing, out.getvalue()


class ImportCycles(unittest.TestCase):
    def test_crate_paths_make_a_circle(self):
        failing, out = run({
            "src/lib.rs": "mod a;\nmod b;\n",
            "src/a.rs": "use crate::b::B;\npub struct A;\n",
            "src/b.rs": "pub struct B;\nfn f() { let _ = crate::a::A; }\n",
        })
        self.assertEqual(failing, 1)
        self.assertIn("src/a.rs -> crates/fake/src/b.rs", out)
        self.assertIn("src/b.rs -> crates/fake/src/a.rs", out)

    def test_mod_declarations_comments_and_strings_are_not_edges(self):
        failing, out = run({
            "src/lib.rs": "mod a;\nmod b;\n",
            "src/a.rs": "use crate::b::B;\n",
            "src/b.rs": '// crate::a::A\n/* crate::a::A */\nconst S: &str = "crate::a::A";\n'
                        'const R: &str = r#"crate::a::A"#;\nconst C: char = \'"\';\n'
                        "fn f<'a>(x: &'a u8) {}\n",
        })
        self.assertEqual((failing, out), (0, ""))

    def test_child_and_super_paths(self):
        failing, out = run({
            "src/lib.rs": "mod rec;\n",
            "src/rec/mod.rs": "mod comms;\npub struct Item;\nfn f() { comms::Comms::new(); }\n",
            "src/rec/comms.rs": "pub struct Comms;\nfn g() -> super::Item { super::Item }\n",
        })
        self.assertEqual(failing, 1)
        self.assertIn("src/rec/mod.rs -> crates/fake/src/rec/comms.rs", out)
        self.assertIn("src/rec/comms.rs -> crates/fake/src/rec/mod.rs", out)

    def test_use_groups_and_globs(self):
        failing, out = run({
            "src/lib.rs": "mod a;\nmod b;\nmod c;\n",
            "src/a.rs": "use crate::{b::{B, self}, c};\n",
            "src/b.rs": "pub struct B;\n",
            "src/c.rs": "use crate::a::*;\n",
        })
        self.assertEqual(failing, 1)
        self.assertIn("src/c.rs -> crates/fake/src/a.rs", out)
        self.assertNotIn("src/b.rs", out)

    def test_tests_module_using_its_file_and_visibility_are_not_edges(self):
        failing, out = run({
            "src/lib.rs": "mod a;\npub(crate) fn top() {}\n",
            "src/a.rs": "pub(super) fn f() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
        })
        self.assertEqual((failing, out), (0, ""))

    def test_allow_list(self):
        files = {
            "src/lib.rs": "mod a;\nmod b;\n",
            "src/a.rs": "use crate::b::B;\n",
            "src/b.rs": "use crate::a::A;\n",
        }
        allowed = {"crates/fake/src/a.rs crates/fake/src/b.rs"}
        failing, out = run(files, allowed)
        self.assertEqual(failing, 0)
        self.assertIn("known circle", out)
        failing, out = run(files, allowed | {"crates/fake/src/x.rs crates/fake/src/y.rs"})
        self.assertEqual(failing, 0)
        self.assertIn("no longer found", out)

    def test_quoted_code_of_a_build_script_is_not_an_edge(self):
        failing, out = run({
            "build/main.rs": "mod gen;\nfn main() {}\n",
            "build/gen.rs": "fn f() { quote! { crate::main(); } }\n",
        })
        self.assertEqual((failing, out), (0, ""))


if __name__ == "__main__":
    unittest.main()
