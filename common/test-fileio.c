// SPDX-License-Identifier: GPL-2.0-or-later
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "fileio.h"
#include "strv.h"

static char dir[] = "/tmp/test-fileio.XXXXXX";
static char path[64];

static void remove_dir(void)
{
	unlink(path);
	rmdir(dir);
}

static void write_file(size_t n)
{
	FILE *f = fopen(path, "w");

	CHECK(f);
	for (size_t i = 0; i < n; i++)
		fputc('a' + (int)(i % 26), f);
	CHECK(fclose(f) == 0);
}

/* proc_find_fd(): an fd of ours by its link's prefix, none, no such process */
static void test_proc_find_fd(void)
{
	struct sb_error err = {};
	int fd = memfd_create("sbtest-proc-find-fd", MFD_CLOEXEC);

	CHECK(fd >= 0);
	CHECK(proc_find_fd(getpid(), "/memfd:sbtest-proc-find-fd", &err) == fd);
	CHECK(proc_find_fd(getpid(), "/memfd:sbtest-nobody-has-this", &err) == -ENOENT);
	CHECK(proc_find_fd(INT_MAX, "/memfd:", &err) == -ESRCH);
	CHECK_MSG(strstr(err.msg, "no process"), "%s", err.msg);
	close(fd);

	/* proc_tgid(): a process is its own group; no such thread */
	CHECK(proc_tgid(getpid()) == getpid());
	CHECK(proc_tgid(INT_MAX) == -1);
}

/* this process's own command line, one cut short, and one that is not there */
static void test_proc_cmdline(void)
{
	char **argv = NULL;

	CHECK(proc_cmdline(getpid(), PROC_CMDLINE_MAX, &argv) == 0);
	CHECK(argv && argv[0] && strstr(argv[0], "test-fileio") && !argv[1]);
	strv_free(argv);
	CHECK(proc_cmdline(getpid(), 4, &argv) == 0);
	CHECK(strlen(argv[0]) == 4 && !argv[1]); /* the last argument closed where the read stopped */
	strv_free(argv);
	argv = NULL;
	CHECK(proc_cmdline(0, PROC_CMDLINE_MAX, &argv) == -ENOENT && !argv);
}

int main(void)
{
	test_proc_cmdline();
	struct sb_error err = {};
	char *buf = (char *)"untouched";
	size_t len = 12345;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	atexit(remove_dir);

	/* missing: named, and the out-parameters stay as they were */
	CHECK(read_full_file(path, 100, &buf, &len, &err) == -ENOENT);
	CHECK_MSG(!strcmp(err.msg + strlen(dir), "/f: cannot open: No such file or directory"), "%s", err.msg);
	CHECK(!strcmp(buf, "untouched") && len == 12345);

	/* a directory */
	CHECK(read_full_file(dir, 100, &buf, &len, &err) == -EISDIR);
	CHECK(!strcmp(err.msg + strlen(dir), ": is a directory"));

	/* read_regular_file(): a FIFO without a writer, a directory, /dev/zero and a socket are refused at once */
	{
		char fifo[96], sock[96];
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
		snprintf(sock, sizeof(sock), "%s/sock", dir);
		CHECK(mkfifo(fifo, 0600) == 0);
		CHECK(read_regular_file(fifo, 100, &buf, &len, &err) == -EINVAL);
		CHECK_MSG(strstr(err.msg, fifo) && strstr(err.msg, "is a FIFO, not a regular file"), "%s", err.msg);
		CHECK(read_regular_file(dir, 100, &buf, &len, &err) == -EINVAL && strstr(err.msg, "is a directory"));
		CHECK(read_regular_file("/dev/zero", 100, &buf, &len, &err) == -EINVAL &&
		      strstr(err.msg, "/dev/zero: is a character device"));
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
		CHECK(s >= 0 && bind(s, (struct sockaddr *)&sa, sizeof(sa)) == 0);
		CHECK(read_regular_file(sock, 100, &buf, &len, &err) == -EINVAL);
		CHECK_MSG(strstr(err.msg, "is a socket, not a regular file"), "%s", err.msg);
		close(s);
		unlink(sock);
		unlink(fifo);
		CHECK(!strcmp(buf, "untouched") && len == 12345);
	}

	/* empty, exactly the bound, one byte over */
	write_file(0);
	CHECK(read_full_file(path, 100, &buf, &len, &err) == 0);
	CHECK(len == 0 && buf[0] == '\0');
	free(buf);
	CHECK(read_regular_file(path, 100, &buf, &len, &err) == 0 && len == 0);
	free(buf);

	for (size_t size = 1; size < 20000; size = size * 3 + 1) {
		write_file(size);
		CHECK(read_full_file(path, size, &buf, &len, NULL) == 0);
		CHECK(len == size && buf[len] == '\0' && strlen(buf) == size);
		CHECK(buf[size - 1] == 'a' + (int)((size - 1) % 26));
		free(buf);
		CHECK(read_full_file(path, size - 1, &buf, NULL, &err) == -EFBIG);
		char want[128];
		snprintf(want, sizeof(want), "%s: larger than %zu bytes", path, size - 1);
		CHECK_MSG(!strcmp(err.msg, want), "%s", err.msg);
	}

	/* a pipe: no size to go by, several reads */
	{
		int p[2];
		char *text;
		char chunk[1000];

		memset(chunk, 'x', sizeof(chunk));
		CHECK(pipe(p) == 0);
		for (int i = 0; i < 10; i++)
			CHECK(write(p[1], chunk, sizeof(chunk)) == (ssize_t)sizeof(chunk));
		close(p[1]);
		CHECK(read_full_fd(p[0], 10000, &text, &len) == 0);
		CHECK(len == 10000 && text[9999] == 'x' && text[10000] == '\0');
		free(text);
		close(p[0]);

		CHECK(pipe(p) == 0);
		CHECK(write(p[1], chunk, sizeof(chunk)) == (ssize_t)sizeof(chunk));
		close(p[1]);
		CHECK(read_full_fd(p[0], 999, &text, &len) == -EFBIG);
		close(p[0]);
	}

	/* bytes written through another fd are read too: to the end, not to a size taken earlier */
	{
		char *text;
		int fd;

		write_file(10);
		fd = open(path, O_RDWR | O_CLOEXEC);
		CHECK(fd >= 0);
		CHECK(pwrite(fd, "0123456789", 10, 10) == 10);
		CHECK(read_full_fd(fd, 100, &text, &len) == 0);
		CHECK(len == 20 && !strcmp(text + 10, "0123456789"));
		free(text);
		close(fd);
	}
	test_proc_find_fd();
	return 0;
}
