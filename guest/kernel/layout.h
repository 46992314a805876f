/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Memory layout constants shared by boot.S and the C code. */
#pragma once

#define STACK_SHIFT 14
#define STACK_SIZE (1 << STACK_SHIFT) /* per vCPU */

/* Real-mode start-up code for the APs: the SIPI vector is this >> 12. */
#define TRAMPOLINE_BASE 0x8000

#define PAGE_4K 0x1000ull
#define PAGE_2M 0x200000ull
