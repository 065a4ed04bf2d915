// SPDX-License-Identifier: GPL-2.0
/*
 * iopactl: JSON out (a pretty-printing writer) and in (a small strict
 * parser, used by ctl-load to check `iopactl status --json` in the guest,
 * where there is no python).  No system calls.
 *
 * Strings: the writer copies valid UTF-8 as is, escapes '"', '\\' and the
 * control characters (U+0000..U+001F and U+007F) and writes each byte
 * that is not part of a valid UTF-8 sequence as U+FFFD, so the output is
 * always valid UTF-8 and valid JSON whatever bytes a process name holds.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "iopactl.h"

/* ---- UTF-8 ----------------------------------------------------------------- */

/* RFC 3629: shortest form only, no surrogates, at most U+10FFFF. */
size_t ctl_utf8_seq_len(const unsigned char *s, size_t len)
{
	unsigned char c = s[0];
	size_t n, i;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (len < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* ---- writer ---------------------------------------------------------------- */

void ctl_json_string(FILE *f, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, n;

	putc('"', f);
	while (i < len) {
		unsigned char c = s[i];

		switch (c) {
		case '"':  fputs("\\\"", f); i++; continue;
		case '\\': fputs("\\\\", f); i++; continue;
		case '\b': fputs("\\b", f); i++; continue;
		case '\f': fputs("\\f", f); i++; continue;
		case '\n': fputs("\\n", f); i++; continue;
		case '\r': fputs("\\r", f); i++; continue;
		case '\t': fputs("\\t", f); i++; continue;
		}
		if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			i++;
			continue;
		}
		n = ctl_utf8_seq_len(s + i, len - i);
		if (!n) {
			fputs("\\ufffd", f);
			i++;
			continue;
		}
		fwrite(s + i, 1, n, f);
		i += n;
	}
	putc('"', f);
}

void ctl_jw_init(struct ctl_jw *w, FILE *f)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
	w->first[0] = 1;
}

void ctl_jw_init_compact(struct ctl_jw *w, FILE *f)
{
	ctl_jw_init(w, f);
	w->compact = 1;
}

/* Comma, newline and indentation before a member; then its key. */
static void jw_member(struct ctl_jw *w, const char *key)
{
	int i;

	if (w->depth > 0) {
		if (!w->first[w->depth])
			putc(',', w->f);
		if (!w->compact) {
			putc('\n', w->f);
			for (i = 0; i < w->depth; i++)
				fputs("  ", w->f);
		}
	}
	w->first[w->depth] = 0;
	if (key) {
		ctl_json_string(w->f, key, strlen(key));
		fputs(w->compact ? ":" : ": ", w->f);
	}
}

static void jw_open(struct ctl_jw *w, const char *key, char c)
{
	jw_member(w, key);
	putc(c, w->f);
	if (w->depth + 1 < (int)(sizeof(w->first) / sizeof(w->first[0])))
		w->depth++;
	w->first[w->depth] = 1;
}

static void jw_close(struct ctl_jw *w, char c)
{
	int empty = w->first[w->depth], i;

	if (w->depth > 0)
		w->depth--;
	if (!empty && !w->compact) {
		putc('\n', w->f);
		for (i = 0; i < w->depth; i++)
			fputs("  ", w->f);
	}
	putc(c, w->f);
	if (w->depth == 0)
		putc('\n', w->f);
}

void ctl_jw_obj_begin(struct ctl_jw *w, const char *key)
{
	jw_open(w, key, '{');
}

void ctl_jw_obj_end(struct ctl_jw *w)
{
	jw_close(w, '}');
}

void ctl_jw_arr_begin(struct ctl_jw *w, const char *key)
{
	jw_open(w, key, '[');
}

void ctl_jw_arr_end(struct ctl_jw *w)
{
	jw_close(w, ']');
}

void ctl_jw_u64(struct ctl_jw *w, const char *key, uint64_t v)
{
	jw_member(w, key);
	fprintf(w->f, "%" PRIu64, v);
}

void ctl_jw_s64(struct ctl_jw *w, const char *key, int64_t v)
{
	jw_member(w, key);
	fprintf(w->f, "%" PRId64, v);
}

void ctl_jw_bool(struct ctl_jw *w, const char *key, int v)
{
	jw_member(w, key);
	fputs(v ? "true" : "false", w->f);
}

void ctl_jw_null(struct ctl_jw *w, const char *key)
{
	jw_member(w, key);
	fputs("null", w->f);
}

void ctl_jw_strn(struct ctl_jw *w, const char *key, const char *s, size_t len)
{
	jw_member(w, key);
	ctl_json_string(w->f, s, len);
}

void ctl_jw_str(struct ctl_jw *w, const char *key, const char *s)
{
	if (!s)
		ctl_jw_null(w, key);
	else
		ctl_jw_strn(w, key, s, strlen(s));
}

void ctl_jw_raw(struct ctl_jw *w, const char *key, const char *num)
{
	jw_member(w, key);
	fputs(num, w->f);
}

/* ---- parser ---------------------------------------------------------------- */

struct jp {
	const unsigned char	*p;
	const unsigned char	*end;
	const unsigned char	*start;
	char			*err;
	size_t			errlen;
	int			depth;
};

#define JP_MAX_DEPTH	64

static int jp_fail(struct jp *j, const char *what)
{
	if (!j->err[0])
		snprintf(j->err, j->errlen, "%s at byte %zu", what,
			 (size_t)(j->p - j->start));
	return -1;
}

static void jp_ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' ||
				 *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

/* A growing byte buffer. */
struct jbuf {
	char	*s;
	size_t	len;
	size_t	cap;
};

static int jbuf_add(struct jbuf *b, const void *src, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 32;
		char *s;

		while (cap < b->len + n + 1)
			cap *= 2;
		s = realloc(b->s, cap);
		if (!s)
			return -1;
		b->s = s;
		b->cap = cap;
	}
	memcpy(b->s + b->len, src, n);
	b->len += n;
	b->s[b->len] = '\0';
	return 0;
}

static int jp_hex4(struct jp *j, uint32_t *out)
{
	uint32_t v = 0;
	int i;

	if (j->end - j->p < 4)
		return jp_fail(j, "short \\u escape");
	for (i = 0; i < 4; i++) {
		unsigned char c = *j->p++;

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return jp_fail(j, "bad \\u escape");
	}
	*out = v;
	return 0;
}

static int put_utf8(struct jbuf *b, uint32_t cp)
{
	unsigned char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (unsigned char)(0xc0 | cp >> 6);
		u[1] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (unsigned char)(0xe0 | cp >> 12);
		u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (unsigned char)(0xf0 | cp >> 18);
		u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return jbuf_add(b, u, n);
}

/* At the opening quote.  The decoded string goes to @b (caller frees). */
static int jp_string(struct jp *j, struct jbuf *b)
{
	j->p++;
	if (jbuf_add(b, "", 0))
		return jp_fail(j, "out of memory");
	for (;;) {
		unsigned char c;
		size_t n;

		if (j->p >= j->end)
			return jp_fail(j, "unterminated string");
		c = *j->p;
		if (c == '"') {
			j->p++;
			return 0;
		}
		if (c < 0x20)
			return jp_fail(j, "raw control character in string");
		if (c == '\\') {
			uint32_t cp, lo;
			char e;

			if (j->end - j->p < 2)
				return jp_fail(j, "unterminated escape");
			e = (char)j->p[1];
			j->p += 2;
			switch (e) {
			case '"': case '\\': case '/':
				if (jbuf_add(b, &e, 1))
					return jp_fail(j, "out of memory");
				continue;
			case 'b': e = '\b'; break;
			case 'f': e = '\f'; break;
			case 'n': e = '\n'; break;
			case 'r': e = '\r'; break;
			case 't': e = '\t'; break;
			case 'u':
				if (jp_hex4(j, &cp))
					return -1;
				if (cp >= 0xdc00 && cp <= 0xdfff)
					return jp_fail(j, "lone low surrogate");
				if (cp >= 0xd800 && cp <= 0xdbff) {
					if (j->end - j->p < 6 || j->p[0] != '\\' ||
					    j->p[1] != 'u')
						return jp_fail(j, "lone high surrogate");
					j->p += 2;
					if (jp_hex4(j, &lo))
						return -1;
					if (lo < 0xdc00 || lo > 0xdfff)
						return jp_fail(j, "bad surrogate pair");
					cp = 0x10000 + ((cp - 0xd800) << 10) +
					     (lo - 0xdc00);
				}
				if (put_utf8(b, cp))
					return jp_fail(j, "out of memory");
				continue;
			default:
				j->p -= 1;
				return jp_fail(j, "unknown escape");
			}
			if (jbuf_add(b, &e, 1))
				return jp_fail(j, "out of memory");
			continue;
		}
		n = ctl_utf8_seq_len(j->p, (size_t)(j->end - j->p));
		if (!n)
			return jp_fail(j, "invalid UTF-8 in string");
		if (jbuf_add(b, j->p, n))
			return jp_fail(j, "out of memory");
		j->p += n;
	}
}

static int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static int jp_number(struct jp *j, struct ctl_jv *v)
{
	const unsigned char *s = j->p;
	struct jbuf b = { 0 };

	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p >= j->end || !is_digit(*j->p))
		return jp_fail(j, "bad number");
	if (*j->p == '0')
		j->p++;
	else
		while (j->p < j->end && is_digit(*j->p))
			j->p++;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (j->p >= j->end || !is_digit(*j->p))
			return jp_fail(j, "bad fraction");
		while (j->p < j->end && is_digit(*j->p))
			j->p++;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (j->p >= j->end || !is_digit(*j->p))
			return jp_fail(j, "bad exponent");
		while (j->p < j->end && is_digit(*j->p))
			j->p++;
	}
	if (jbuf_add(&b, s, (size_t)(j->p - s)))
		return jp_fail(j, "out of memory");
	v->type = CTL_J_NUM;
	v->s = b.s;
	v->len = b.len;
	return 0;
}

static int jp_lit(struct jp *j, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n))
		return jp_fail(j, "unexpected character");
	j->p += n;
	return 0;
}

static void jv_free_members(struct ctl_jv *v);

static int jp_value(struct jp *j, struct ctl_jv *v);

static int jp_add_kid(struct jp *j, struct ctl_jv *v, size_t *cap)
{
	if (v->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 4;
		struct ctl_jv *k = realloc(v->kids, ncap * sizeof(*k));

		if (!k)
			return jp_fail(j, "out of memory");
		v->kids = k;
		if (v->type == CTL_J_OBJ) {
			char **keys = realloc(v->keys, ncap * sizeof(*keys));

			if (!keys)
				return jp_fail(j, "out of memory");
			v->keys = keys;
		}
		*cap = ncap;
	}
	memset(&v->kids[v->n], 0, sizeof(v->kids[0]));
	if (v->type == CTL_J_OBJ)
		v->keys[v->n] = NULL;
	v->n++;
	return 0;
}

static int jp_container(struct jp *j, struct ctl_jv *v, int obj)
{
	char close = obj ? '}' : ']';
	size_t cap = 0;

	if (++j->depth > JP_MAX_DEPTH)
		return jp_fail(j, "nested too deep");
	v->type = obj ? CTL_J_OBJ : CTL_J_ARR;
	j->p++;
	jp_ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		j->depth--;
		return 0;
	}
	for (;;) {
		if (jp_add_kid(j, v, &cap))
			return -1;
		if (obj) {
			struct jbuf key = { 0 };

			jp_ws(j);
			if (j->p >= j->end || *j->p != '"')
				return jp_fail(j, "expected a member name");
			if (jp_string(j, &key)) {
				free(key.s);
				return -1;
			}
			v->keys[v->n - 1] = key.s;
			jp_ws(j);
			if (j->p >= j->end || *j->p != ':')
				return jp_fail(j, "expected ':'");
			j->p++;
		}
		if (jp_value(j, &v->kids[v->n - 1]))
			return -1;
		jp_ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			j->depth--;
			return 0;
		}
		return jp_fail(j, obj ? "expected ',' or '}'" :
				   "expected ',' or ']'");
	}
}

static int jp_value(struct jp *j, struct ctl_jv *v)
{
	jp_ws(j);
	if (j->p >= j->end)
		return jp_fail(j, "unexpected end");
	switch (*j->p) {
	case '{':
		return jp_container(j, v, 1);
	case '[':
		return jp_container(j, v, 0);
	case '"': {
		struct jbuf b = { 0 };

		v->type = CTL_J_STR;
		if (jp_string(j, &b)) {
			free(b.s);
			return -1;
		}
		v->s = b.s;
		v->len = b.len;
		return 0;
	}
	case 't':
		v->type = CTL_J_BOOL;
		v->b = 1;
		return jp_lit(j, "true");
	case 'f':
		v->type = CTL_J_BOOL;
		return jp_lit(j, "false");
	case 'n':
		v->type = CTL_J_NULL;
		return jp_lit(j, "null");
	default:
		return jp_number(j, v);
	}
}

static void jv_free_members(struct ctl_jv *v)
{
	size_t i;

	for (i = 0; i < v->n; i++) {
		jv_free_members(&v->kids[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->kids);
	free(v->keys);
	free(v->s);
}

struct ctl_jv *ctl_json_parse(const char *text, size_t len,
			      char *err, size_t errlen)
{
	struct jp j = {
		.p = (const unsigned char *)text,
		.end = (const unsigned char *)text + len,
		.start = (const unsigned char *)text,
		.err = err,
		.errlen = errlen,
	};
	struct ctl_jv *v = calloc(1, sizeof(*v));

	err[0] = '\0';
	if (!v) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (jp_value(&j, v) == 0) {
		jp_ws(&j);
		if (j.p == j.end)
			return v;
		jp_fail(&j, "trailing characters");
	}
	ctl_json_free(v);
	return NULL;
}

void ctl_json_free(struct ctl_jv *v)
{
	if (!v)
		return;
	jv_free_members(v);
	free(v);
}

const struct ctl_jv *ctl_json_get(const struct ctl_jv *v, const char *key)
{
	size_t i;

	if (!v || v->type != CTL_J_OBJ)
		return NULL;
	for (i = 0; i < v->n; i++)
		if (!strcmp(v->keys[i], key))
			return &v->kids[i];
	return NULL;
}

int ctl_json_u64(const struct ctl_jv *v, uint64_t *out)
{
	if (!v || v->type != CTL_J_NUM || ctl_parse_u64(v->s, out))
		return -1;
	return 0;
}
