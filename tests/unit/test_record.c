// SPDX-License-Identifier: MIT
/* Record layout, type table, validity and special-cycle kinds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bach/record.h"
#include "lib/formats/formats.h"

static void pack_unpack(void **state)
{
	struct bach_rec r = { .addr = 0x12345678, .be = 0x0f, .ctl = 0xd0 }, u;
	uint8_t b[6];

	(void)state;
	bach_rec_pack(b, &r);
	assert_memory_equal(b, "\x12\x34\x56\x78\x0f\xd0", 6);
	bach_rec_unpack(b, &u);
	assert_int_equal(u.addr, 0x12345678);
	assert_int_equal(u.be, 0x0f);
	assert_int_equal(u.ctl, 0xd0);
}

static void type_table(void **state)
{
	static const char *const want[16] = {
		"INVALID", "INT_ACK",	 "INVALID",    "SPECIAL",
		"INVALID", "IO_READ",	 "INVALID",    "IO_WRITE",
		"I_FETCH", "NC_I_FETCH", "INVALID",    "INVALID",
		"D_READ",  "NC_D_READ",	 "WRITE_BACK", "D_WRITE",
	};

	(void)state;
	for (unsigned t = 0; t < 16; t++) {
		assert_string_equal(bach_type_name(t), want[t]);
		assert_int_equal(bach_type_valid(t),
				 strcmp(want[t], "INVALID") != 0);
	}
	assert_int_equal(bach_type_parse("nc_d_read"), 13);
	assert_int_equal(bach_type_parse("INVALID"), -1);
	assert_int_equal(bach_type_parse("bogus"), -1);
	assert_true(bach_type_is_memory(BACH_T_I_FETCH));
	assert_false(bach_type_is_memory(BACH_T_INVALID10));
	assert_false(bach_type_is_memory(BACH_T_IO_WRITE));
}

static void validity(void **state)
{
	(void)state;
	assert_int_equal(bach_rec_check((const uint8_t *)"\0\0\x10\0\0\x90"),
			 0);
	assert_int_equal(bach_rec_check((const uint8_t *)"\0\0\x10\0\0\x60"),
			 BACH_F_TYPE);
	assert_int_equal(bach_rec_check((const uint8_t *)"\0\0\x10\x04\0\x90"),
			 BACH_F_ADDR_LOW);
	assert_int_equal(bach_rec_check((const uint8_t *)"\0\0\x10\0\0\x91"),
			 BACH_F_CTL_LOW);
	/* a gap marker is INVALID with low nibble F */
	assert_true(bach_rec_is_gap((const uint8_t *)"\0\0\0\x05\0\x0f"));
	assert_true(bach_rec_is_gap((const uint8_t *)"\0\0\0\x05\0\xaf"));
	assert_false(bach_rec_is_gap((const uint8_t *)"\0\0\0\x05\0\x9f"));
	assert_int_equal(bach_be_bytes(0x00), 8);
	assert_int_equal(bach_be_bytes(0x0f), 4);
	assert_int_equal(bach_be_bytes(0xfe), 1);
}

static void specials(void **state)
{
	(void)state;
	assert_int_equal(bach_special_kind(0, 0xfe), BACH_SP_SHUTDOWN);
	assert_int_equal(bach_special_kind(0, 0xfd), BACH_SP_FLUSH);
	assert_int_equal(bach_special_kind(0, 0xfb), BACH_SP_HALT);
	assert_int_equal(bach_special_kind(0x10, 0xfb), BACH_SP_STOP_GRANT);
	assert_int_equal(bach_special_kind(0, 0xf7), BACH_SP_WRITEBACK);
	assert_int_equal(bach_special_kind(0, 0xef), BACH_SP_FLUSH_ACK);
	assert_int_equal(bach_special_kind(0, 0xdf), BACH_SP_BTM);
	assert_int_equal(bach_special_kind(0, 0x7f), BACH_SP_OTHER);
	assert_string_equal(bach_special_name(BACH_SP_HALT), "halt");
}

static void text_forms(void **state)
{
	char buf[BACH_TEXT_MAX + 1];
	size_t n;

	(void)state;
	n = bach_fmt_text(buf, (const uint8_t *)"\x00\x10\x00\x20\x0f\xe0");
	buf[n] = 0;
	assert_string_equal(buf, "00100020 0f WRITE_BACK\n");
	n = bach_fmt_text(buf, (const uint8_t *)"\xff\xff\xff\xf8\xff\xa0");
	buf[n] = 0;
	assert_string_equal(buf, "fffffff8 ff INVALID\n");
	n = bach_fmt_csv(buf, (const uint8_t *)"\x00\x10\x00\x20\x0f\x90", 42);
	buf[n] = 0;
	assert_string_equal(buf, "42,0x00100020,0x0f,0x90,NC_I_FETCH\n");
	n = bach_fmt_jsonl(buf, (const uint8_t *)"\x00\x00\x00\x10\xfb\x30", 7);
	buf[n] = 0;
	assert_string_equal(
		buf,
		"{\"index\":7,\"address\":\"0x00000010\",\"be\":\"0xfb\",\"control\":\"0x30\",\"type\":\"SPECIAL\",\"special\":\"stop_grant\"}\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pack_unpack), cmocka_unit_test(type_table),
		cmocka_unit_test(validity),    cmocka_unit_test(specials),
		cmocka_unit_test(text_forms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
