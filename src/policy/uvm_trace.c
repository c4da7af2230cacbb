/* SPDX-License-Identifier: MIT */
/*
 * uvm_trace.c - access traces for the simulator: the binary form (what
 * tools record and the generator writes) and a text form (for tests and
 * hand-written cases).  docs/formats.md describes both.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uvm_sim.h"

int uvm_trace_append(struct uvm_trace *t, const struct uvm_rec *r, struct err *e)
{
	if (t->cnt == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 4096;
		struct uvm_rec *n = realloc(t->recs, cap * sizeof(*n));
		if (!n)
			return err_set(e, ENOMEM, "trace: out of memory (%zu records)", t->cnt);
		t->recs = n;
		t->cap = cap;
	}
	t->recs[t->cnt++] = *r;
	return 0;
}

void uvm_trace_free(struct uvm_trace *t)
{
	free(t->recs);
	memset(t, 0, sizeof(*t));
}

static uint64_t uvm_get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t uvm_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void uvm_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void uvm_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static int uvm_trace_parse_binary(const uint8_t *d, size_t len, const char *name,
				  struct uvm_trace *t, struct err *e)
{
	if (len < UVM_TRACE_HDR_SIZE)
		return err_set(e, EINVAL, "%s: truncated header (%zu of %d bytes)", name, len,
			       UVM_TRACE_HDR_SIZE);
	uint32_t version = uvm_get32(d + 8), rec_size = uvm_get32(d + 12);
	uint64_t cnt = uvm_get64(d + 16);
	if (version != UVM_TRACE_VERSION)
		return err_set(e, EINVAL, "%s: trace version %u (this gpuext reads %d)", name,
			       version, UVM_TRACE_VERSION);
	/* Larger records are a later version's: read the fields known here. */
	if (rec_size < UVM_TRACE_REC_SIZE)
		return err_set(e, EINVAL, "%s: record size %u below %d", name, rec_size,
			       UVM_TRACE_REC_SIZE);
	if (cnt > (len - UVM_TRACE_HDR_SIZE) / rec_size)
		return err_set(e, EINVAL, "%s: header says %llu records of %u bytes, the file "
			       "holds %zu", name, (unsigned long long)cnt, rec_size,
			       (len - UVM_TRACE_HDR_SIZE) / rec_size);
	for (uint64_t i = 0; i < cnt; i++) {
		const uint8_t *r = d + UVM_TRACE_HDR_SIZE + i * rec_size;
		struct uvm_rec rec = {.addr = uvm_get64(r), .ts_ns = uvm_get64(r + 8),
				      .launch = uvm_get32(r + 16), .pid = uvm_get32(r + 20),
				      .access = r[24]};
		if (rec.access > UVM_ACCESS_MANAGED)
			return err_set(e, EINVAL, "%s: record %llu: unknown access type %u", name,
				       (unsigned long long)i, rec.access);
		int err = uvm_trace_append(t, &rec, e);
		if (err)
			return err;
	}
	return 0;
}

/* One unsigned number (decimal or 0x hex) at *p, advancing it. */
static int uvm_text_num(const char **p, uint64_t *v)
{
	char *end;

	while (**p == ' ' || **p == '\t')
		(*p)++;
	if (!isdigit((unsigned char)**p))
		return -1;
	errno = 0;
	*v = strtoull(*p, &end, 0);
	if (errno || (*end && !isspace((unsigned char)*end) && *end != '#'))
		return -1;
	*p = end;
	return 0;
}

int uvm_trace_parse_text(const char *text, size_t len, const char *name, struct uvm_trace *t,
			 struct err *e)
{
	const char *p = text, *end = text + len;

	for (unsigned line = 1; p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char buf[256];
		if (n >= sizeof(buf))
			return err_set(e, EINVAL, "%s:%u: line too long", name, line);
		memcpy(buf, p, n);
		buf[n] = '\0';
		p += n + (nl ? 1 : 0);
		const char *q = buf;
		while (*q == ' ' || *q == '\t' || *q == '\r')
			q++;
		if (!*q || *q == '#')
			continue;
		uint64_t ts, launch, pid, addr;
		if (uvm_text_num(&q, &ts) || uvm_text_num(&q, &launch) || uvm_text_num(&q, &pid) ||
		    launch > UINT32_MAX || pid > UINT32_MAX)
			return err_set(e, EINVAL, "%s:%u: expected 'TS LAUNCH PID r|w|a|m ADDR'",
				       name, line);
		while (*q == ' ' || *q == '\t')
			q++;
		const char *kinds = UVM_ACCESS_LETTERS;
		const char *k = *q ? strchr(kinds, *q) : NULL;
		if (!k || (q[1] && !isspace((unsigned char)q[1])))
			return err_set(e, EINVAL, "%s:%u: access type must be r, w, a or m", name,
				       line);
		q++;
		if (uvm_text_num(&q, &addr))
			return err_set(e, EINVAL, "%s:%u: expected an address after the access type",
				       name, line);
		while (*q == ' ' || *q == '\t' || *q == '\r')
			q++;
		if (*q && *q != '#')
			return err_set(e, EINVAL, "%s:%u: unexpected '%s' after the address", name,
				       line, q);
		struct uvm_rec rec = {.addr = addr, .ts_ns = ts, .launch = (uint32_t)launch,
				      .pid = (uint32_t)pid, .access = (uint8_t)(k - kinds)};
		int err = uvm_trace_append(t, &rec, e);
		if (err)
			return err;
	}
	return 0;
}

int uvm_trace_read(const char *path, struct uvm_trace *t, struct err *e)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	int err = 0;

	memset(t, 0, sizeof(*t));
	if (!f)
		return err_set(e, errno, "%s: %s", path, strerror(errno));
	for (;;) {
		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 1 << 16;
			uint8_t *n = realloc(buf, ncap);
			if (!n) {
				err = err_set(e, ENOMEM, "%s: too large or out of memory", path);
				break;
			}
			buf = n;
			cap = ncap;
		}
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (!got)
			break;
	}
	if (!err && ferror(f))
		err = err_set(e, EIO, "%s: read error", path);
	fclose(f);
	if (!err) {
		if (len >= 8 && !memcmp(buf, UVM_TRACE_MAGIC, 8))
			err = uvm_trace_parse_binary(buf, len, path, t, e);
		else
			err = uvm_trace_parse_text((const char *)buf, len, path, t, e);
	}
	free(buf);
	if (err)
		uvm_trace_free(t);
	return err;
}

int uvm_trace_write(const char *path, const struct uvm_trace *t, int text, struct err *e)
{
	FILE *f = strcmp(path, "-") ? fopen(path, text ? "w" : "wb") : stdout;
	int ok = 1;

	if (!f)
		return err_set(e, errno, "%s: %s", path, strerror(errno));
	if (text) {
		ok = fprintf(f, "# gpuext UVM trace: TS LAUNCH PID r|w|a|m ADDR\n") > 0;
		for (size_t i = 0; ok && i < t->cnt; i++) {
			const struct uvm_rec *r = &t->recs[i];
			ok = fprintf(f, "%llu %u %u %c 0x%llx\n", (unsigned long long)r->ts_ns,
				     r->launch, r->pid, UVM_ACCESS_LETTERS[r->access % 4],
				     (unsigned long long)r->addr) > 0;
		}
	} else {
		uint8_t h[UVM_TRACE_HDR_SIZE] = {0};
		memcpy(h, UVM_TRACE_MAGIC, 8);
		uvm_put32(h + 8, UVM_TRACE_VERSION);
		uvm_put32(h + 12, UVM_TRACE_REC_SIZE);
		uvm_put64(h + 16, t->cnt);
		ok = fwrite(h, sizeof(h), 1, f) == 1;
		for (size_t i = 0; ok && i < t->cnt; i++) {
			uint8_t r[UVM_TRACE_REC_SIZE] = {0};
			uvm_put64(r, t->recs[i].addr);
			uvm_put64(r + 8, t->recs[i].ts_ns);
			uvm_put32(r + 16, t->recs[i].launch);
			uvm_put32(r + 20, t->recs[i].pid);
			r[24] = t->recs[i].access;
			ok = fwrite(r, sizeof(r), 1, f) == 1;
		}
	}
	if (f != stdout)
		ok = (fclose(f) == 0) && ok;
	else
		ok = (fflush(f) == 0) && ok;
	return ok ? 0 : err_set(e, EIO, "%s: write error", path);
}

static int uvm_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

uint64_t *uvm_trace_blocks(const struct uvm_trace *t, size_t *n)
{
	uint64_t *blocks = malloc((t->cnt ? t->cnt : 1) * sizeof(*blocks));

	*n = 0;
	if (!blocks)
		return NULL;
	for (size_t i = 0; i < t->cnt; i++)
		blocks[i] = t->recs[i].addr >> MEM_BLOCK_SHIFT;
	qsort(blocks, t->cnt, sizeof(*blocks), uvm_u64_cmp);
	for (size_t i = 0; i < t->cnt; i++)
		if (!i || blocks[i] != blocks[i - 1])
			blocks[(*n)++] = blocks[i];
	return blocks;
}

uint64_t uvm_trace_footprint(const struct uvm_trace *t)
{
	size_t n;
	free(uvm_trace_blocks(t, &n));
	return (uint64_t)n << MEM_BLOCK_SHIFT;
}
