#!/usr/bin/env python3
"""Tests of crate-layers.py's rules on made-up dependency graphs and CLI files."""

import importlib.util
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = importlib.util.spec_from_file_location("crate_layers", os.path.join(HERE, "crate-layers.py"))
cl = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(cl)


class CrateLayers(unittest.TestCase):
    def test_a_reader_on_the_write_side_is_reported(self):
        found = cl.dependency_violations({"conifer-sim": {"conifer-trace", "conifer-write"}})
        self.assertEqual(found, ["conifer-sim depends on conifer-write, which its layer must not use"])

    def test_the_sides_may_not_use_each_other_and_the_format_neither(self):
        found = cl.dependency_violations({
            "conifer-trace": {"conifer-format", "conifer-write"},
            "conifer-write": {"conifer-format", "conifer-trace"},
            "conifer-format": {"conifer-compress", "conifer-trace"},
        })
        self.assertEqual(len(found), 3)

    def test_the_intended_graph_passes(self):
        self.assertEqual(cl.dependency_violations({
            "conifer-format": {"conifer-compress", "conifer-spec"},
            "conifer-write": {"conifer-format", "conifer-compress"},
            "conifer-trace": {"conifer-format", "conifer-compress"},
            "conifer-analyze": {"conifer-trace"},
            "conifer-preload": {"conifer-format", "conifer-write"},
        }), [])

    def test_only_the_merge_command_of_the_cli_names_the_write_side(self):
        found = cl.cli_violations({
            "crates/conifer-cli/src/merge.rs": "use conifer_write::partial::merge_partials;",
            "crates/conifer-cli/src/stats.rs": "let t = conifer_write::merge::merge(v);",
            "crates/conifer-cli/src/decode.rs": "use conifer_trace::ReadCalls; // not conifer_writer",
        })
        self.assertEqual(len(found), 1)
        self.assertIn("stats.rs", found[0])


if __name__ == "__main__":
    unittest.main()
