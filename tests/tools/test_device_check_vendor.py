"""The device check's vendor table (tools/device_check_vendor.py) on fake
lookups: the rows, the ratio against the vendor's best, and the Markdown."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
from device_check_vendor import vendor_markdown, vendor_row  # noqa: E402

LOOKUP = {"template": "gemm_mma_sync", "config": "BK32_BM128", "rule": "exact", "tuned_median_ms": 0.50,
          "vendor_comparison": {"library_best": "gemm_cublaslt ALGO3", "library_best_ms": 0.40,
                                "kernel_best": "gemm_mma_sync BK32_BM128", "kernel_best_ms": 0.50}}
FORCED = {"template": "gemm_cublaslt", "config": "ALGO3", "rule": "exact", "tuned_median_ms": 0.40,
          "library_call": {"library": "cublaslt", "algo_index": 3, "replayed": True,
                           "algo": {"id": 21, "tile": 18, "stages": 35, "splitk": 1, "reduction": 0, "swizzle": 1,
                                    "custom": 0}},
          "kernel": {"origin": "library"}}


class VendorTable(unittest.TestCase):
    def test_row_compares_the_selection_with_the_faster_vendor(self):
        row = vendor_row("gemm/K=256,M=256,N=256,batch=1/bf16/NN", 0.45, LOOKUP, FORCED)
        self.assertEqual(row["cublaslt_best"], {"name": "gemm_cublaslt ALGO3", "ms": 0.40})
        self.assertEqual(row["kforge_best"]["name"], "gemm_mma_sync BK32_BM128")
        self.assertAlmostEqual(row["selected_over_vendor"], 0.50 / 0.40)
        self.assertTrue(row["replayed"])
        self.assertEqual(row["cublaslt_algo"]["id"], 21)

    def test_failed_lookup_is_a_row_with_its_error(self):
        row = vendor_row("p", 0.45, {"error": "lookup_x.json: missing"}, {"error": "missing"})
        self.assertIn("error", row)
        self.assertIn("lookup failed: lookup_x.json: missing", "\n".join(vendor_markdown([row])))

    def test_only_kernels_tuned(self):
        lookup = {"template": "gemm_simt_tiled", "config": "BM64", "rule": "exact", "tuned_median_ms": 2.0}
        row = vendor_row("p", 1.0, lookup, {"error": "no library entry"})
        self.assertIsNone(row["cublaslt_best"])
        self.assertEqual(row["kforge_best"]["ms"], 2.0)
        self.assertAlmostEqual(row["selected_over_vendor"], 2.0)

    def test_markdown_has_one_line_per_problem(self):
        md = vendor_markdown([vendor_row("gemm/a", 0.45, LOOKUP, FORCED), vendor_row("gemm/b", None, LOOKUP, FORCED)])
        lines = [m for m in md if m.startswith("| gemm/")]
        self.assertEqual(len(lines), 2)
        self.assertIn("id=21 tile=18 stages=35 splitk=1 reduction=0 swizzle=1 custom=0 (replayed)", lines[0])
        self.assertIn("| 1.250 |", lines[0])


if __name__ == "__main__":
    unittest.main()
