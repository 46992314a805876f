/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The qemu VM backend (vm.h): QEMU started by us with an argv vector
 * (guest/qemu-args.h for the micro guest), its QMP, telemetry and control
 * line on inherited descriptors. vm.h says how it runs; vm_start() picks it
 * unless the spec names another backend.
 */
#pragma once

struct vm_backend;

/* vm.h's backend table entry for qemu. */
extern const struct vm_backend vm_backend_qemu;
