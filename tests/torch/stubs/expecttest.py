"""The part of the `expecttest` package that torch.testing._internal.common_utils imports.

Debian packages PyTorch's test helpers but not expecttest (pip's expecttest: inline expected-output
assertions). distributed_test.py asserts no inline expectations, so its TestCase only needs to exist; the
inline assertions are kept honest (plain equality) in case something calls them.
"""
import unittest

ACCEPT = False


class TestCase(unittest.TestCase):
    longMessage = True

    def assertExpectedInline(self, actual, expect, skip=0):  # noqa: N802 (expecttest's name)
        self.assertEqual(str(actual).strip(), str(expect).strip())

    def assertExpectedRaisesInline(self, exc_type, callable, expect, *args, **kwargs):  # noqa: N802
        with self.assertRaises(exc_type) as ctx:
            callable(*args, **kwargs)
        self.assertExpectedInline(str(ctx.exception), expect)
