// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Memory: the multiboot memory map, a bump allocator right after the
 * kernel image, identity page tables over all RAM (4 KiB or 2 MiB pages,
 * page=), and the choice of the workload region.
 */
#include "fmt.h"
#include "kernel.h"

#define MULTIBOOT_BOOTLOADER_MAGIC 0x2badb002
#define MBI_FLAG_CMDLINE (1u << 2)
#define MBI_FLAG_MMAP (1u << 6)
#define E820_RAM 1
#define MAX_RAM_RANGES 32

#define PTE_P 0x1ull
#define PTE_W 0x2ull
#define PTE_PS 0x80ull
#define PTE_ADDR 0x000ffffffffff000ull

extern char __kernel_start[], __kernel_end[];

struct ram_range {
	uint64_t base, end;
};

static struct ram_range ram[MAX_RAM_RANGES];
static unsigned nr_ram;
static uint64_t alloc_next, alloc_end;
static uint64_t *pml4;

char cmdline_copy[GUEST_CMDLINE_MAX];

static inline uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static inline uint64_t align_down(uint64_t v, uint64_t a)
{
	return v & ~(a - 1);
}

static uint32_t rd32(uint64_t addr)
{
	return *(volatile uint32_t *)(uintptr_t)addr;
}

static uint64_t rd64(uint64_t addr)
{
	return *(volatile uint64_t *)(uintptr_t)addr;
}

/* Copy what we need out of the multiboot info first: QEMU puts the command
 * line right after our image, where the allocator is about to hand out
 * page tables. */
int multiboot_read(char *err, size_t errlen)
{
	uint64_t mbi = boot_info, kernel_end = (uint64_t)(uintptr_t)__kernel_end;
	uint32_t flags;

	if (boot_magic != MULTIBOOT_BOOTLOADER_MAGIC) {
		k_snprintf(err, errlen, "not started by a multiboot loader (magic %x): boot it with QEMU -kernel", boot_magic);
		return -1;
	}
	flags = rd32(mbi);
	if (flags & MBI_FLAG_CMDLINE) {
		const char *s = (const char *)(uintptr_t)rd32(mbi + 16);
		size_t n = 0;

		while (s[n] && n < GUEST_CMDLINE_MAX - 1) {
			cmdline_copy[n] = s[n];
			n++;
		}
		cmdline_copy[n] = '\0';
		if (s[n]) {
			k_snprintf(err, errlen, "command line longer than %u bytes: shorten -append", GUEST_CMDLINE_MAX - 1);
			return -1;
		}
	}
	if (!(flags & MBI_FLAG_MMAP)) {
		k_snprintf(err, errlen, "the loader passed no memory map");
		return -1;
	}

	uint64_t p = rd32(mbi + 48), end = p + rd32(mbi + 44);

	while (p + 24 <= end) {
		uint32_t size = rd32(p);
		uint64_t base = rd64(p + 4), len = rd64(p + 12);
		uint32_t type = rd32(p + 20);

		if (type == E820_RAM && len) {
			if (nr_ram == MAX_RAM_RANGES) {
				k_snprintf(err, errlen, "more than %u RAM ranges in the memory map", MAX_RAM_RANGES);
				return -1;
			}
			ram[nr_ram++] = (struct ram_range){ base, base + len };
			ram_bytes += len;
			if (base <= kernel_end && base + len > kernel_end) {
				alloc_next = kernel_end;
				alloc_end = base + len;
			}
		}
		p += size + 4;
	}
	if (!alloc_end) {
		k_snprintf(err, errlen, "the memory map has no RAM after the kernel image");
		return -1;
	}
	if (alloc_end > 0x100000000ull)
		alloc_end = 0x100000000ull; /* the boot page tables map 4 GiB */
	return 0;
}

/* Not zeroed: every caller fills what it takes. */
void *alloc_pages(uint64_t bytes)
{
	uint64_t p = align_up(alloc_next, PAGE_4K);

	bytes = align_up(bytes, PAGE_4K);
	if (p + bytes > alloc_end || p + bytes < p)
		fatal("out of memory for page tables and stacks (%lu KiB more): give the VM more memory or use page=2m",
		      (unsigned long)(bytes >> 10));
	alloc_next = p + bytes;
	return (void *)(uintptr_t)p;
}

/* 8 bytes per iteration: memory accesses are what costs under emulation */
static void zero_page(void *page)
{
	uint64_t n = PAGE_4K / 8;

	__asm__ volatile("rep stosq" : "+D"(page), "+c"(n) : "a"(0ull) : "memory");
}

/* The table an entry points to, made (zeroed) if absent. A page table
 * (fill_pt) is filled whole, so it need not be zeroed. */
static uint64_t *table_at(uint64_t *parent, unsigned idx, int fill_pt)
{
	if (!(parent[idx] & PTE_P)) {
		uint64_t *t = alloc_pages(PAGE_4K);

		if (!fill_pt)
			zero_page(t);
		parent[idx] = (uint64_t)(uintptr_t)t | PTE_P | PTE_W;
	}
	return (uint64_t *)(uintptr_t)(parent[idx] & PTE_ADDR);
}

/* [start, end), both 2 MiB aligned */
static void map_range(uint64_t start, uint64_t end, unsigned page_shift)
{
	for (uint64_t a = start; a < end; a += PAGE_2M) {
		uint64_t *pdpt = table_at(pml4, (a >> 39) & 511, 0);
		uint64_t *pd = table_at(pdpt, (a >> 30) & 511, 0);
		unsigned i = (a >> 21) & 511;

		if (page_shift == 21) {
			pd[i] = a | PTE_P | PTE_W | PTE_PS;
		} else {
			uint64_t *pt = table_at(pd, i, 1);

			for (unsigned j = 0; j < 512; j++)
				pt[j] = (a + ((uint64_t)j << 12)) | PTE_P | PTE_W;
		}
	}
}

void paging_init(unsigned page_shift)
{
	uint64_t top = 0;

	for (unsigned i = 0; i < nr_ram; i++)
		if (ram[i].end > top)
			top = ram[i].end;
	pml4 = alloc_pages(PAGE_4K);
	zero_page(pml4);
	/* All of RAM and the holes between (never touched). */
	map_range(0, align_up(top, PAGE_2M), page_shift);
	/* Local APIC and I/O APIC, below 4 GiB. */
	if (top < 0xfe000000ull)
		map_range(0xfe000000ull, 0x100000000ull, 21);
	write_cr3((uint64_t)(uintptr_t)pml4);
	ap_cr3 = (uint32_t)(uintptr_t)pml4;
}

int region_init(const struct guest_config *c, char *err, size_t errlen)
{
	uint64_t granule = 1ull << c->page_shift;
	uint64_t best_lo = 0, best_len = 0, want;

	/* The largest stretch of RAM left above 1 MiB. */
	for (unsigned i = 0; i < nr_ram; i++) {
		uint64_t lo = ram[i].base, hi = ram[i].end;

		if (lo <= alloc_next && hi > alloc_next)
			lo = alloc_next;
		if (lo < 0x100000)
			lo = 0x100000;
		lo = align_up(lo, PAGE_2M);
		hi = align_down(hi, granule);
		if (hi > lo && hi - lo > best_len) {
			best_lo = lo;
			best_len = hi - lo;
		}
	}
	if (c->mem_bytes) {
		want = align_up(c->mem_bytes, granule);
		if (want > best_len) {
			k_snprintf(err, errlen,
				   "mem=%lu MiB does not fit: the largest free RAM range holds %lu MiB; lower mem= or give the VM more memory",
				   (unsigned long)(c->mem_bytes >> 20), (unsigned long)(best_len >> 20));
			return -1;
		}
	} else {
		want = align_down(best_len / 100 * c->mem_percent, granule);
		if (!want) {
			k_snprintf(err, errlen, "mem=%u%% of %lu MiB free RAM is less than one page: raise mem= or give the VM more memory",
				   c->mem_percent, (unsigned long)(best_len >> 20));
			return -1;
		}
	}
	region_base = best_lo;
	region_bytes = want;
	return 0;
}
