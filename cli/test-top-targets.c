// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapbench top's readers of QEMU command lines (top-targets.c): the QMP
 * sockets QEMU serves in each of the ways one may give them, those it does
 * not serve (client sockets, fd=, abstract, the human monitor) and
 * libvirt's, left alone; -name in its forms; and the /proc readers on this
 * process itself.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "strv.h"
#include "top-targets.h"

/* The sockets of argv (NULL-ended) as one string "a|b", and whether one was libvirt's. */
static const char *sockets(const char *const *argv, bool *libvirt)
{
	static char buf[512];
	char **v = NULL;

	CHECK(top_qmp_sockets((char *const *)argv, &v, libvirt) == 0 && v);
	buf[0] = '\0';
	for (size_t i = 0; v[i]; i++) {
		if (i)
			strcat(buf, "|");
		CHECK(strlen(buf) + strlen(v[i]) < sizeof(buf) - 2);
		strcat(buf, v[i]);
	}
	strv_free(v);
	return buf;
}

static void test_sockets(void)
{
	bool lv;

	{
		const char *a[] = { "qemu", "-accel", "kvm", "-qmp", "unix:/tmp/q.sock,server=on,wait=off", NULL };
		CHECK(!strcmp(sockets(a, &lv), "/tmp/q.sock") && !lv);
	}
	{
		/* legacy flags, --qmp, -qmp-pretty, an escaped comma, path= */
		const char *a[] = { "qemu", "--qmp", "unix:/tmp/a,,b.sock,server,nowait", "-qmp-pretty",
				    "unix:path=rel.sock,server=yes", NULL };
		CHECK(!strcmp(sockets(a, &lv), "/tmp/a,b.sock|rel.sock"));
	}
	{
		/* QEMU connects to these: someone else's listeners */
		const char *a[] = { "qemu", "-qmp", "unix:/tmp/c.sock", "-qmp", "unix:/tmp/d.sock,server=off", "-qmp",
				    "tcp:localhost:4444,server=on", "-qmp", "stdio", NULL };
		CHECK(!strcmp(sockets(a, &lv), ""));
	}
	{
		/* -mon before its -chardev; a human monitor; fd= and abstract sockets */
		const char *a[] = { "qemu", "-mon", "chardev=m0,mode=control", "-chardev",
				    "socket,id=m0,path=/run/m0.sock,server=on,wait=off", "-chardev",
				    "socket,id=h,path=/run/hmp.sock,server=on", "-mon", "h", "-chardev",
				    "socket,id=f,fd=3,server=on", "-mon", "chardev=f,mode=control", "-chardev",
				    "socket,id=ab,path=x,server=on,abstract=on", "-mon", "ab,mode=control", "-qmp",
				    "unix:/tmp/first,server=on", NULL };
		CHECK_MSG(!strcmp(sockets(a, &lv), "/tmp/first|/run/m0.sock"), "%s", sockets(a, &lv));
	}
	{
		/* libvirt's monitor (older libvirt gave it a path): never ours to take */
		const char *a[] = { "qemu", "-name", "guest=dom1,debug-threads=on", "-chardev",
				    "socket,id=charmonitor,path=/var/lib/libvirt/qemu/domain-1-dom1/monitor.sock,server=on,wait=off",
				    "-mon", "chardev=charmonitor,id=monitor,mode=control", NULL };
		CHECK(!strcmp(sockets(a, &lv), "") && lv);
	}
	{
		/* an option's value missing at the end; the empty command line */
		const char *a[] = { "qemu", "-qmp", NULL };
		const char *b[] = { NULL };
		CHECK(!strcmp(sockets(a, &lv), "") && !lv);
		CHECK(!strcmp(sockets(b, &lv), ""));
	}
}

static void test_name(void)
{
	char buf[16];

	{
		const char *a[] = { "qemu", "-name", "guest=dom1,debug-threads=on", NULL };
		top_qemu_name((char *const *)a, buf, sizeof(buf));
		CHECK(!strcmp(buf, "dom1"));
	}
	{
		const char *a[] = { "qemu", "--name", "my vm:1,process=qemu-x", NULL };
		top_qemu_name((char *const *)a, buf, sizeof(buf));
		CHECK(!strcmp(buf, "my_vm_1"));
	}
	{
		/* the last -name counts, as in QEMU; cut to the buffer */
		const char *a[] = { "qemu", "-name", "a", "-name", "a-very-long-name-indeed", NULL };
		top_qemu_name((char *const *)a, buf, sizeof(buf));
		CHECK(!strcmp(buf, "a-very-long-nam"));
	}
	{
		const char *a[] = { "qemu", "-m", "128", NULL };
		top_qemu_name((char *const *)a, buf, sizeof(buf));
		CHECK(!strcmp(buf, ""));
	}
}

static void test_proc(void)
{
	pid_t sentinel = 0, *pids = &sentinel;
	size_t found = 99;

	CHECK(top_tgid_of(getpid()) == getpid());
	CHECK(top_tgid_of(0) == -1);
	CHECK(!top_holds_kvm_vm(getpid()));
	/* whatever VMs this host runs, the scan itself works and never lists us */
	CHECK(top_find_vms(getpid(), &pids, &found) == 0 && found != 99 && pids != &sentinel && (found ? pids != NULL : pids == NULL));
	for (size_t i = 0; i < found; i++)
		CHECK(pids[i] != getpid() && (i == 0 || pids[i] > pids[i - 1]));
	free(pids);
}

int main(void)
{
	test_sockets();
	test_name();
	test_proc();
	printf("ok\n");
	return 0;
}
