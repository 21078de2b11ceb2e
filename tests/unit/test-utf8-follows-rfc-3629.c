/* SPDX-License-Identifier: MIT */
/* test-utf8-follows-rfc-3629.c - formats/utf8.h, the one UTF-8 rule of the
 * tree (the library's name check, jitstack's output and jitdump reader).
 *
 * Named inputs first: valid characters of 1 to 4 bytes at the edges of each
 * row of RFC 3629's table, and what the table leaves out (surrogates,
 * overlong forms, values past U+10FFFF, sequences cut short, stray
 * continuation bytes).  Then every sequence of up to three bytes, and every
 * four-byte one with a lead of F0-F4, against a model that decodes the
 * value and checks its range, as RFC 3629 section 3 describes it.
 */
#include "formats/utf8.h"
#include "unit.h"

#include <stdbool.h>
#include <string.h>

typedef struct named {
	const char *what;
	const char *bytes;
	size_t want; /* the length utf8_len must give, 0 for none */
} named;

static const named cases[] = {
	{ "NUL", "", 1 },
	{ "ASCII", "A", 1 },
	{ "DEL", "\x7f", 1 },
	{ "U+0080, the first two-byte", "\xc2\x80", 2 },
	{ "U+00E9", "\xc3\xa9", 2 },
	{ "U+07FF, the last two-byte", "\xdf\xbf", 2 },
	{ "U+0800, the first three-byte", "\xe0\xa0\x80", 3 },
	{ "U+20AC", "\xe2\x82\xac", 3 },
	{ "U+D7FF, before the surrogates", "\xed\x9f\xbf", 3 },
	{ "U+E000, after the surrogates", "\xee\x80\x80", 3 },
	{ "U+FFFD", "\xef\xbf\xbd", 3 },
	{ "U+FFFF", "\xef\xbf\xbf", 3 },
	{ "U+10000, the first four-byte", "\xf0\x90\x80\x80", 4 },
	{ "U+1F600", "\xf0\x9f\x98\x80", 4 },
	{ "U+10FFFF, the last", "\xf4\x8f\xbf\xbf", 4 },
	{ "surrogate U+D800", "\xed\xa0\x80", 0 },
	{ "surrogate U+DBFF", "\xed\xaf\xbf", 0 },
	{ "surrogate U+DC00", "\xed\xb0\x80", 0 },
	{ "surrogate U+DFFF", "\xed\xbf\xbf", 0 },
	{ "overlong NUL (C0 80)", "\xc0\x80", 0 },
	{ "overlong '/' (C0 AF)", "\xc0\xaf", 0 },
	{ "overlong U+007F (C1 BF)", "\xc1\xbf", 0 },
	{ "overlong NUL in three (E0 80 80)", "\xe0\x80\x80", 0 },
	{ "overlong U+07FF in three (E0 9F BF)", "\xe0\x9f\xbf", 0 },
	{ "overlong NUL in four (F0 80 80 80)", "\xf0\x80\x80\x80", 0 },
	{ "overlong U+FFFF in four (F0 8F BF BF)", "\xf0\x8f\xbf\xbf", 0 },
	{ "U+110000, past the last (F4 90 80 80)", "\xf4\x90\x80\x80", 0 },
	{ "lead F5", "\xf5\x80\x80\x80", 0 },
	{ "lead F8 (five bytes once)", "\xf8\x88\x80\x80\x80", 0 },
	{ "lead FF", "\xff", 0 },
	{ "lone continuation", "\x80", 0 },
	{ "lone continuation BF", "\xbf", 0 },
	{ "two-byte cut short", "\xc3", 0 },
	{ "three-byte cut short", "\xe2\x82", 0 },
	{ "four-byte cut short", "\xf0\x9f\x98", 0 },
	{ "second byte not a continuation", "\xc3\x41", 0 },
	{ "third byte not a continuation", "\xe2\x82\x41", 0 },
	{ "fourth byte not a continuation", "\xf0\x9f\x98\x41", 0 },
};

/* RFC 3629 section 3: decode by the lead byte's count, then the value must
 * need exactly that many bytes, be no surrogate and be at most U+10FFFF. */
static size_t model(const uint8_t *p, size_t n)
{
	if (n == 0)
		return 0;
	if (p[0] < 0x80)
		return 1;
	size_t len = (p[0] & 0xe0) == 0xc0 ? 2 : (p[0] & 0xf0) == 0xe0 ? 3 : (p[0] & 0xf8) == 0xf0 ? 4 : 0;
	if (len == 0 || n < len)
		return 0;
	static const uint32_t min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
	uint32_t v = p[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (p[i] & 0x3f);
	}
	if (v < min[len] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	return len;
}

static void named_inputs_get_their_lengths(void)
{
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const named *c = &cases[i];
		size_t n = strlen(c->bytes) + (c->bytes[0] == 0); /* NUL: the one byte */
		size_t got = utf8_len((const uint8_t *)c->bytes, n);
		CHECK(got == c->want, "%s: %zu, want %zu", c->what, got, c->want);
		CHECK(model((const uint8_t *)c->bytes, n) == c->want, "the model on %s", c->what);
	}
}

/* A valid character with fewer of its bytes available is cut short, and
 * nothing past the bytes given decides it. */
static void a_character_cut_by_n_is_refused(void)
{
	static const char *valid[] = { "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80" };
	for (size_t i = 0; i < sizeof valid / sizeof *valid; i++) {
		const uint8_t *p = (const uint8_t *)valid[i];
		size_t len = strlen(valid[i]);
		for (size_t n = 0; n < len; n++)
			CHECK(utf8_len(p, n) == 0, "%zu-byte character given %zu bytes", len, n);
		CHECK(utf8_len(p, len + 10) == len, "%zu-byte character given more bytes", len);
	}
	CHECK(utf8_len((const uint8_t *)"A", 0) == 0, "no bytes: no character");
}

/* Every sequence of one to three bytes, and every four-byte one with a
 * lead that may start one, as the model sees it. */
static void every_short_sequence_matches_the_model(void)
{
	unsigned long bad = 0, valid[5] = { 0 };
	uint8_t p[4];
	for (unsigned a = 0; a < 256; a++) {
		p[0] = (uint8_t)a;
		bad += utf8_len(p, 1) != model(p, 1);
		for (unsigned b = 0; b < 256; b++) {
			p[1] = (uint8_t)b;
			bad += utf8_len(p, 2) != model(p, 2);
			for (unsigned c = 0; c < 256; c++) {
				p[2] = (uint8_t)c;
				size_t got = utf8_len(p, 3);
				bad += got != model(p, 3);
				valid[got] += got == 3;
			}
		}
	}
	for (unsigned a = 0xf0; a <= 0xf4; a++) {
		p[0] = (uint8_t)a;
		for (unsigned b = 0x80; b < 0xc0; b++) {
			p[1] = (uint8_t)b;
			for (unsigned c = 0; c < 256; c++) {
				p[2] = (uint8_t)c;
				for (unsigned d = 0; d < 256; d++) {
					p[3] = (uint8_t)d;
					size_t got = utf8_len(p, 4);
					bad += got != model(p, 4);
					valid[got] += got == 4;
				}
			}
		}
	}
	CHECK(bad == 0, "%lu sequences where utf8_len and the model differ", bad);
	/* U+0800-U+FFFF less the 2048 surrogates; U+10000-U+10FFFF */
	CHECK(valid[3] == 0x10000 - 0x800 - 0x800, "%lu three-byte characters", valid[3]);
	CHECK(valid[4] == 0x100000, "%lu four-byte characters", valid[4]);
}

int main(void)
{
	named_inputs_get_their_lengths();
	a_character_cut_by_n_is_refused();
	every_short_sequence_matches_the_model();
	return unit_done("test-utf8-follows-rfc-3629");
}
