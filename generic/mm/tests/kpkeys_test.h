/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the kpkeys KUnit suites share with the runner that judges their
 * console log: a WARNING fails the boot unless the line printed before it
 * says that a test expects it.
 */
#ifndef _MM_TESTS_KPKEYS_TEST_H
#define _MM_TESTS_KPKEYS_TEST_H

#define KPKEYS_TEST_WARNING_EXPECTED "kpkeys-test: the next WARNING is expected"

#endif /* _MM_TESTS_KPKEYS_TEST_H */
