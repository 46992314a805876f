// SPDX-License-Identifier: GPL-2.0-or-later
#include "check.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic-file.h"

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	CHECK(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

int main(void)
{
	char dir[] = "/tmp/test-atomic-file.XXXXXX";
	char path[256], buf[64];
	struct sb_error err = { 0 };
	struct stat st;
	FILE *f;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/report.json", dir);

	CHECK(atomic_file_write(path, "{\"a\":1}\n", 8, 0644, &err) == 0);
	CHECK(atomic_file_write(path, "{\"a\":2}\n", 8, 0640, &err) == 0);
	f = fopen(path, "r");
	CHECK(f);
	CHECK(fgets(buf, sizeof(buf), f));
	fclose(f);
	CHECK(strcmp(buf, "{\"a\":2}\n") == 0);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0640);
	CHECK(count_entries(dir) == 1); /* no temp files left behind */

	/* In pieces: the file is their bytes in order. */
	const struct atomic_file_piece pieces[] = { { "{\"a\":", 5 }, { "", 0 }, { "3}", 2 }, { "\n", 1 } };
	CHECK(atomic_file_write_pieces(path, pieces, 4, 0644, &err) == 0);
	f = fopen(path, "r");
	CHECK(f);
	CHECK(fgets(buf, sizeof(buf), f));
	fclose(f);
	CHECK(strcmp(buf, "{\"a\":3}\n") == 0);
	CHECK(count_entries(dir) == 1);

	/* A directory that does not exist: an error naming the path, nothing written. */
	snprintf(path, sizeof(path), "%s/missing/report.json", dir);
	CHECK(atomic_file_write(path, "x", 1, 0644, &err) < 0);
	CHECK(err.code < 0 && strstr(err.msg, "missing/report.json"));

	snprintf(path, sizeof(path), "%s/report.json", dir);
	unlink(path);
	rmdir(dir);
	printf("ok\n");
	return 0;
}
