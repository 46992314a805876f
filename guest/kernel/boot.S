/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Entry of the micro guest. QEMU's multiboot loader jumps to _start in
 * 32-bit protected mode (EAX = multiboot magic, EBX = multiboot info).
 * We map the first 4 GiB with 2 MiB pages, switch to long mode and call
 * kmain(). Application processors come in through the real-mode
 * trampoline, which the bootstrap processor copies below 1 MiB; they load
 * the final page tables (ap_cr3) and call ap_main(slot).
 */
#include "layout.h"

#define MB_MAGIC 0x1BADB002
#define MB_FLAGS 0x00000002 /* ask for the memory map */

#define CR0_PE 0x00000001
#define CR0_PG 0x80000000
#define CR4_PAE 0x00000020
#define MSR_EFER 0xc0000080
#define EFER_LME 0x00000100

#define SEL_CODE64 0x08
#define SEL_DATA 0x10
#define SEL_CODE32 0x18

/* The BSP and the APs take the same way into long mode: page tables from
 * %eax, PAE, EFER.LME, then paging (the far jump that follows enters 64-bit
 * code). */
.macro ENABLE_LONG_MODE
	movl %eax, %cr3
	movl %cr4, %eax
	orl $CR4_PAE, %eax
	movl %eax, %cr4
	movl $MSR_EFER, %ecx
	rdmsr
	orl $EFER_LME, %eax
	wrmsr
	movl %cr0, %eax
	orl $(CR0_PG | CR0_PE), %eax
	movl %eax, %cr0
.endm

.macro LOAD_DATA_SEGMENTS
	movw $SEL_DATA, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	movw %ax, %fs
	movw %ax, %gs
.endm

	.section .multiboot, "a"
	.balign 4
	.long MB_MAGIC
	.long MB_FLAGS
	.long -(MB_MAGIC + MB_FLAGS)

/* ---- bootstrap processor, 32-bit ---------------------------------------- */
	.section .text.boot, "ax"
	.code32
	.globl _start
_start:
	cli
	cld
	movl %eax, boot_magic
	movl %ebx, boot_info
	rdtsc
	movl %eax, boot_tsc
	movl %edx, boot_tsc + 4
	movl $boot_stack_top, %esp

	/* PML4[0] -> PDPT, PDPT[0..3] -> four page directories */
	movl $boot_pdpt + 3, boot_pml4
	movl $boot_pd + 3, %eax
	xorl %ecx, %ecx
1:	movl %eax, boot_pdpt(, %ecx, 8)
	addl $0x1000, %eax
	incl %ecx
	cmpl $4, %ecx
	jb 1b
	/* 2048 x 2 MiB, present | writable | large */
	movl $0x83, %eax
	xorl %ecx, %ecx
2:	movl %eax, boot_pd(, %ecx, 8)
	addl $0x200000, %eax
	incl %ecx
	cmpl $2048, %ecx
	jb 2b

	movl $boot_pml4, %eax
	ENABLE_LONG_MODE
	lgdt gdt64_ptr
	ljmp $SEL_CODE64, $bsp_entry64

/* ---- application processors: real mode, copied to TRAMPOLINE_BASE ------ */
	.code16
	.globl trampoline_start, trampoline_end
trampoline_start:
	cli
	cld
	movw %cs, %ax
	movw %ax, %ds
	lgdtl (tramp_gdt_ptr - trampoline_start)
	movl %cr0, %eax
	orl $CR0_PE, %eax
	movl %eax, %cr0
	ljmpl $SEL_CODE32, $ap_entry32
	.balign 8
tramp_gdt_ptr:
	.word gdt64_end - gdt64 - 1
	.long gdt64
trampoline_end:

	.code32
ap_entry32:
	movw $SEL_DATA, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	movl ap_cr3, %eax
	ENABLE_LONG_MODE
	ljmp $SEL_CODE64, $ap_entry64

/* ---- 64-bit ------------------------------------------------------------- */
	.code64
bsp_entry64:
	LOAD_DATA_SEGMENTS
	movq $boot_stack_top, %rsp
	xorl %ebp, %ebp
	call kmain
3:	cli
	hlt
	jmp 3b

ap_entry64:
	LOAD_DATA_SEGMENTS
	/* A slot per AP in arrival order; slot 0 is the BSP. */
	movl $1, %eax
	lock xaddl %eax, ap_next_slot
	cmpl ap_max_slot, %eax
	ja 3b                     /* more CPUs than fw_cfg announced: park it */
	movl %eax, %edi
	movq ap_stack_base, %rsp
	movl %eax, %ecx
	shlq $STACK_SHIFT, %rcx
	addq %rcx, %rsp           /* slot's stack is [base + (slot-1)*S, base + slot*S) */
	xorl %ebp, %ebp
	call ap_main
	jmp 3b

/* ---- exceptions --------------------------------------------------------- */
/* Each stub leaves the same frame: vector, error code (0 when the CPU pushes
 * none), then what the CPU pushed. */
.macro EXC_NOERR vec
exc_stub_\vec:
	pushq $0
	pushq $\vec
	jmp exc_common
.endm
.macro EXC_ERR vec
exc_stub_\vec:
	pushq $\vec
	jmp exc_common
.endm

EXC_NOERR 0
EXC_NOERR 1
EXC_NOERR 2
EXC_NOERR 3
EXC_NOERR 4
EXC_NOERR 5
EXC_NOERR 6
EXC_NOERR 7
EXC_ERR 8
EXC_NOERR 9
EXC_ERR 10
EXC_ERR 11
EXC_ERR 12
EXC_ERR 13
EXC_ERR 14
EXC_NOERR 15
EXC_NOERR 16
EXC_ERR 17
EXC_NOERR 18
EXC_NOERR 19
EXC_NOERR 20
EXC_ERR 21
EXC_NOERR 22
EXC_NOERR 23
EXC_NOERR 24
EXC_NOERR 25
EXC_NOERR 26
EXC_NOERR 27
EXC_NOERR 28
EXC_ERR 29
EXC_ERR 30
EXC_NOERR 31

exc_common:
	cld
	movq %rsp, %rdi
	andq $-16, %rsp
	call exception_handler
	jmp 3b

	.section .rodata
	.balign 8
	.globl exc_stubs
exc_stubs:
	.irp vec, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	.quad exc_stub_\vec
	.endr

/* ---- data --------------------------------------------------------------- */
	.data
	.balign 16
gdt64:
	.quad 0
	.quad 0x00af9a000000ffff /* SEL_CODE64 */
	.quad 0x00cf92000000ffff /* SEL_DATA */
	.quad 0x00cf9a000000ffff /* SEL_CODE32 */
gdt64_end:
	.balign 8
gdt64_ptr:
	.word gdt64_end - gdt64 - 1
	.quad gdt64

	.globl boot_magic, boot_info, boot_tsc, ap_cr3, ap_next_slot, ap_max_slot, ap_stack_base
	.balign 8
boot_tsc:	.quad 0
ap_stack_base:	.quad 0
boot_magic:	.long 0
boot_info:	.long 0
ap_cr3:		.long 0
ap_next_slot:	.long 1
ap_max_slot:	.long 0

	.bss
	.balign 4096
boot_pml4:	.skip 4096
boot_pdpt:	.skip 4096
boot_pd:	.skip 4 * 4096
boot_stack:	.skip STACK_SIZE
boot_stack_top:

	.section .note.GNU-stack, "", @progbits
