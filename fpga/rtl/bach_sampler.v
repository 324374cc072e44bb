`default_nettype none
// bach_sampler: Pentium bus cycles to BYU records, on the bus clock.
//
// The pins arrive registered in the I/O cells, all taken at the same
// rising edge of CLK, where the CPU and the chipset take them too (one
// clock late, which shifts every timestamp by the same amount). The rules
// are those of docs/design.md section 5, for a capture board that has every
// control pin wired, with the bus-hold rules of the processor's data
// sheet (AMD-K6-2 Data Sheet 21850J, section 4 "Signal Descriptions":
// BOFF#, HLDA, KEN#, NA#; the Pentium (P54C) follows the same rules):
//
//   - a clock with ADS# low opens a cycle: A31..A3, BE7#..BE0#, M/IO#,
//     D/C#, W/R# and CACHE# are taken in that clock, with the timestamp;
//   - BRDY# belongs to the oldest open cycle. A cycle ends with its last
//     BRDY#: the fourth of a burst (a line fill: a memory read with CACHE#
//     and KEN# low; a writeback: a memory write with CACHE# low), else the
//     first. The record leaves then, in issue order;
//   - KEN# is taken at the first BRDY# or NA# of a memory read with CACHE#
//     low, and KEN# high there makes the record non-cacheable (its CACHE#
//     bit is set: I_FETCH becomes NC_I_FETCH, D_READ becomes NC_D_READ);
//   - NA# belongs to the oldest open cycle that has not had one: it only
//     decides KEN#; the CPU's next ADS# is what opens the next cycle;
//   - BOFF# low aborts every open cycle, including one whose ADS# is in the
//     same clock, and BRDY#, NA# and ADS# of that clock count for nothing.
//     The CPU floats the bus from the edge where it samples BOFF# low up
//     to the edge where it samples it high again (21850J section 4.11), so
//     the pins of the first clock with BOFF# high are still floating: the
//     earliest restart ADS# is a clock later. The CPU restarts the aborted
//     cycles with new ADS#s, which are the ones recorded: no cycle is
//     recorded twice, and a floating ADS# is no cycle;
//   - HLDA high: the CPU floats the bus in every clock where it drives HLDA
//     (AMD-K6 Data Sheet 20695H section 5.25), and other bus masters may
//     run cycles on it. Their ADS#, BRDY#, NA# and KEN# are not the CPU's:
//     they open, end and decide nothing;
//   - BOFF# in a clock with HLDA high is no BOFF#: "BOFF is sampled but
//     not effective when HLDA is asserted" (AMD-K5 Processor Technical
//     Reference Manual 18524C, section 5.2.10). It aborts nothing and does
//     not float the next clock, where the CPU may drive a cycle as HLDA
//     falls.
//   - AHOLD takes the address bus only: the CPU floats A31..A3 from the
//     clock after it samples AHOLD high (AMD-K5 18524C, 5.2.1), and the
//     chipset drives an inquire's address there, strobed by EADS#
//     (5.2.5). The writeback of a modified line the inquire hit may run
//     while AHOLD is still high, its ADS# with A31..A3 floating: an ADS#
//     in a clock after one with AHOLD high takes A31..A5 of the last
//     EADS# of the capture, A4:A3 = 0 (no part of an inquire's address,
//     5.2.1), as bach decode does (docs/decoding.md). AHOLD is "sampled
//     but not effective when BOFF or HLDA is asserted" (5.2.5): AHOLD in
//     a clock with HLDA high or BOFF# in effect floats nothing. EADS#
//     is ignored while HITM# is asserted (Pentium Processor Family
//     Developer's Manual, 241428, EADS# and HITM#): a second inquire
//     while HITM# answers the first names no line, the writeback is the
//     first one's.
//
// An ADS# in a clock where the bus floats (HLDA high, or BOFF# low without
// HLDA in the clock before) is no record: o_offbus counts it instead.
//
// A Pentium has at most two cycles open. Should a third ADS# come while two
// are open (BRDY# not wired, or a bus this model does not know), the
// oldest is forced out as it is, so that no ADS# is ever lost; i_flush
// (at STOP) forces the open cycles out the same way, one a clock.
//
// Each record carries the timestamp of its ADS# (of the ADS# that
// restarted it, after a BOFF#).
module bach_sampler #(
	parameter TW = 48		// timestamp bits
) (
	input  wire          i_clk,
	input  wire          i_clear,	// START: forget open cycles
	input  wire          i_sample,	// capturing: look at the pins
	input  wire          i_flush,	// stopping: force open cycles out
	input  wire [TW-1:0] i_ts,	// timestamp of this clock's pins

	input  wire          i_ads_n,
	input  wire [31:3]   i_a,
	input  wire [7:0]    i_be_n,
	input  wire          i_mio,
	input  wire          i_dc,
	input  wire          i_wr,
	input  wire          i_cache_n,
	input  wire          i_brdy_n,
	input  wire          i_na_n,
	input  wire          i_ken_n,
	input  wire          i_boff_n,
	input  wire          i_hlda,
	input  wire          i_ahold,
	input  wire          i_eads_n,
	input  wire          i_hitm_n,	// an EADS# while HITM# is low is ignored

	output reg           o_valid = 1'b0, // a record this clock
	output reg  [47:0]   o_rec,	// address BE, BE#, control (design 2)
	output reg  [TW-1:0] o_ts,	// timestamp of its ADS#
	output wire          o_open,	// cycles are open
	output reg           o_offbus = 1'b0 // an ADS# while the bus floated
);
	// An open cycle. Slot 0 is the oldest.
	//   f: A31..A3, BE#, M/IO#, D/C#, W/R#, CACHE# (41 bits)
	//   nk: waits for KEN# (a memory read with CACHE# low)
	//   c: the record's CACHE# bit; l4: a four-transfer burst
	//   n: transfers done; na: NA# seen
	reg         b_v0 = 1'b0, b_v1 = 1'b0;
	reg [40:0]  b_f0, b_f1;
	reg [TW-1:0] b_t0, b_t1;
	reg         b_nk0, b_nk1, b_c0, b_c1, b_l40, b_l41, b_na0, b_na1;
	reg [1:0]   b_n0, b_n1;

	assign o_open = b_v0 | b_v1;

	// the pins this clock
	wire ads = ~i_ads_n, brdy = ~i_brdy_n, na = ~i_na_n;
	// BOFF# as the CPU heeds it: not while HLDA is high (K5 5.2.10)
	wire boff = ~i_boff_n & ~i_hlda;

	// b_boff_q: BOFF# was low (and effective) in the clock before, so the
	// CPU floats the bus in this one (the first clock with BOFF# high
	// included)
	reg  b_boff_q = 1'b0;

	always @(posedge i_clk)
		b_boff_q <= boff;

	// the pins of this clock are not the CPU's
	wire floating = i_hlda || b_boff_q;

	// b_ahold_q: AHOLD high (and effective: not with HLDA or BOFF#) in
	// the clock before, so A31..A3 float in this one; b_inq: A31..A5 at
	// the last EADS# of the capture with HITM# high (b_inq_ok)
	reg         b_ahold_q = 1'b0, b_inq_ok = 1'b0;
	reg  [31:5] b_inq = 27'd0;

	always @(posedge i_clk) begin
		b_ahold_q <= i_ahold & ~i_hlda & ~boff;
		if (i_clear)
			b_inq_ok <= 1'b0;
		else if (i_sample && !i_eads_n && i_hitm_n) begin
			b_inq_ok <= 1'b1;
			b_inq <= i_a[31:5];
		end
	end

	wire        inq = b_ahold_q && b_inq_ok;
	wire [31:3] na_a = inq ? {b_inq, 2'b00} : i_a;
	// a new cycle's fields, and whether it waits for KEN#
	wire [40:0] nf = {na_a, i_be_n, i_mio, i_dc, i_wr, i_cache_n};
	wire        n_nk = i_mio & ~i_wr & ~i_cache_n;
	wire        n_l4 = i_mio & i_wr & ~i_cache_n;	// writeback

	// next state, worked out in order: BRDY#, NA#, ADS#
	reg         v0, v1, nk0, nk1, c0, c1, l40, l41, na0, na1;
	reg [40:0]  f0, f1;
	reg [TW-1:0] t0, t1;
	reg [1:0]   n0, n1;
	reg         emit;
	reg [40:1]  ef;	// the emitted cycle (its raw CACHE# aside)
	reg         ec;
	reg [TW-1:0] et;

	always @* begin
		v0 = b_v0; f0 = b_f0; t0 = b_t0; nk0 = b_nk0;
		c0 = b_c0; l40 = b_l40; na0 = b_na0; n0 = b_n0;
		v1 = b_v1; f1 = b_f1; t1 = b_t1; nk1 = b_nk1;
		c1 = b_c1; l41 = b_l41; na1 = b_na1; n1 = b_n1;
		emit = 1'b0; ef = b_f0[40:1]; ec = b_c0; et = b_t0;

		if (i_clear || (i_sample && boff)) begin
			// START; or BOFF#: abort everything open, and an ADS#
			// of this clock
			v0 = 1'b0; v1 = 1'b0;
		end else if (i_sample && !floating) begin
			// NA#: KEN# of the oldest cycle without an NA#
			if (na && v0 && !na0) begin
				na0 = 1'b1;
				if (nk0) begin
					nk0 = 1'b0; c0 = i_ken_n; l40 = ~i_ken_n;
				end
			end else if (na && v1 && !na1) begin
				na1 = 1'b1;
				if (nk1) begin
					nk1 = 1'b0; c1 = i_ken_n; l41 = ~i_ken_n;
				end
			end
			// BRDY#: a transfer of the oldest cycle
			if (brdy && v0) begin
				if (nk0) begin
					nk0 = 1'b0; c0 = i_ken_n; l40 = ~i_ken_n;
				end
				if (!l40 || n0 == 2'd3) begin
					emit = 1'b1; ef = f0[40:1]; ec = c0; et = t0;
					v0 = v1; f0 = f1; t0 = t1;
					nk0 = nk1; c0 = c1; l40 = l41; na0 = na1;
					n0 = n1; v1 = 1'b0;
				end else begin
					n0 = n0 + 2'd1;
				end
			end
			// ADS#: open a cycle; with two open, force the oldest out
			if (ads) begin
				if (v1) begin
					emit = 1'b1; ef = f0[40:1]; ec = c0; et = t0;
					v0 = v1; f0 = f1; t0 = t1;
					nk0 = nk1; c0 = c1; l40 = l41; na0 = na1;
					n0 = n1; v1 = 1'b0;
				end
				if (v0) begin
					v1 = 1'b1; f1 = nf; t1 = i_ts; nk1 = n_nk;
					c1 = i_cache_n; l41 = n_l4; na1 = 1'b0;
					n1 = 2'd0;
				end else begin
					v0 = 1'b1; f0 = nf; t0 = i_ts; nk0 = n_nk;
					c0 = i_cache_n; l40 = n_l4; na0 = 1'b0;
					n0 = 2'd0;
				end
			end
		end else if (!i_sample && i_flush && v0) begin
			emit = 1'b1; ef = f0[40:1]; ec = c0; et = t0;
			v0 = v1; f0 = f1; t0 = t1; nk0 = nk1; c0 = c1;
			l40 = l41; na0 = na1; n0 = n1; v1 = 1'b0;
		end
	end

	// the open cycles
	always @(posedge i_clk) begin
		b_v0 <= v0; b_f0 <= f0; b_t0 <= t0; b_nk0 <= nk0;
		b_c0 <= c0; b_l40 <= l40; b_na0 <= na0; b_n0 <= n0;
		b_v1 <= v1; b_f1 <= f1; b_t1 <= t1; b_nk1 <= nk1;
		b_c1 <= c1; b_l41 <= l41; b_na1 <= na1; b_n1 <= n1;
	end

	// the record of a cycle that ended this clock
	always @(posedge i_clk) begin
		o_valid <= emit;
		o_rec <= {ef[40:12], 3'b000, ef[11:4], ef[3:1], ec, 4'b0000};
		o_ts <= et;
	end

	// an ADS# of another master, or floating, while capturing
	always @(posedge i_clk)
		o_offbus <= i_sample && !i_clear && floating && ads;

`ifdef FORMAL
	// ---- properties (make fpga-formal: fpga/bench/formal/sampler.ys) ----
	//
	// The environment: a capture samples or flushes, START comes between
	// captures; the timestamp counts clocks, and the one tracked below,
	// f_t, comes at most once (48 bits wrap after 49 days).
	reg f_past = 1'b0;

	always @(posedge i_clk)
		f_past <= 1'b1;

	always @* begin
		assume(!(i_sample && i_flush));
		assume(!(i_clear && (i_sample || i_flush)));
	end

	always @(posedge i_clk)
		if (f_past)
			assume(i_ts == $past(i_ts) + 1'b1);

	(* anyconst *) reg [TW-1:0] f_t;
	reg f_t_seen = 1'b0;

	always @(posedge i_clk)
		if (i_ts == f_t)
			f_t_seen <= 1'b1;

	always @*
		if (f_t_seen)
			assume(i_ts != f_t);

	// The bus floats (the data sheets' rule, stated here on its own):
	// HLDA high, or BOFF# low in the clock before. BOFF# counts only
	// with HLDA low: "BOFF is sampled but not effective when HLDA is
	// asserted" (AMD-K5 Technical Reference Manual 18524C, 5.2.10). The
	// CPU's ADS#s are those sampled while capturing, not with BOFF# in
	// effect, not while the bus floats.
	wire f_boff = !i_boff_n && !i_hlda;
	reg  f_boff_q = 1'b0;

	always @(posedge i_clk)
		f_boff_q <= f_boff;

	wire f_float = i_hlda || f_boff_q;
	wire f_cpu_ads = i_sample && !f_boff && !f_float && !i_ads_n;
	wire f_float_ads = i_sample && f_float && !i_ads_n;

	// One record per CPU ADS#: every one of them is a record, a cycle
	// BOFF# aborted, or still open; no other ADS# is any of those.
	reg [7:0] f_ads = 8'd0, f_rec = 8'd0, f_abort = 8'd0;

	always @(posedge i_clk) begin
		if (f_cpu_ads)
			f_ads <= f_ads + 8'd1;
		if (emit)
			f_rec <= f_rec + 8'd1;
		if (i_clear || (i_sample && f_boff))
			f_abort <= f_abort + {7'd0, b_v0} + {7'd0, b_v1};
	end

	always @* begin
		assert(f_ads == f_rec + f_abort + {7'd0, b_v0} + {7'd0, b_v1});
		// at most two cycles open, the oldest in slot 0
		assert(!b_v1 || b_v0);
		// no record while BOFF# or HLDA float the bus
		if (i_sample && (f_boff || f_float))
			assert(!emit);
		// (for the induction: the sampler's copy of BOFF# is it)
		assert(b_boff_q == f_boff_q);
	end

	// an ADS# while the bus floats is counted, and only that
	always @(posedge i_clk)
		if (f_past)
			assert(o_offbus == $past(f_float_ads));

	// The CPU ADS# at time f_t: a record stamped f_t carries its fields,
	// and only one such record leaves. Its address: the pins, or under
	// AHOLD (high in the clock before: A31..A3 float, [K5] 5.2.1) the
	// line of the capture's last inquire (EADS#), A4:A3 = 0 ([K5] 5.2.5).
	reg [40:0] f_f = 41'd0;
	reg        f_had = 1'b0, f_out = 1'b0;
	reg        f_ahold_q = 1'b0, f_inq_ok = 1'b0;
	reg [31:5] f_inq = 27'd0;

	always @(posedge i_clk) begin
		f_ahold_q <= i_ahold && !i_hlda && !(!i_boff_n && !i_hlda);
		if (i_clear)
			f_inq_ok <= 1'b0;
		else if (i_sample && !i_eads_n && i_hitm_n) begin
			f_inq_ok <= 1'b1;
			f_inq <= i_a[31:5];
		end
	end

	wire [31:3] f_a = f_ahold_q && f_inq_ok ? {f_inq, 2'b00} : i_a;

	always @(posedge i_clk)
		if (f_cpu_ads && i_ts == f_t) begin
			f_had <= 1'b1;
			f_f <= {f_a, i_be_n, i_mio, i_dc, i_wr, i_cache_n};
		end

	always @(posedge i_clk)
		if (emit && et == f_t)
			f_out <= 1'b1;

	always @* begin
		if (emit && et == f_t) begin
			assert(f_had);
			assert(!f_out);
			assert(ef == f_f[40:1]);
		end
		// the open cycles, for the induction: one stamped f_t is it
		if (b_v0 && b_t0 == f_t)
			assert(f_had && !f_out && b_f0 == f_f);
		if (b_v1 && b_t1 == f_t)
			assert(f_had && !f_out && b_f1 == f_f);
		if (b_v0 && b_v1)
			assert(!(b_t0 == f_t && b_t1 == f_t));
		if (!f_t_seen)
			assert(!f_had && !f_out);
		// (for the induction: the sampler's inquire is it)
		assert(b_ahold_q == f_ahold_q && b_inq_ok == f_inq_ok &&
		       (!f_inq_ok || b_inq == f_inq));
	end

	// ---- covers (make fpga-formal runs them: each must be reached) -----
	//
	// Every state the properties above speak of is reachable, so that
	// none of them holds only because its premise never does: a record,
	// two cycles open, a line fill (four BRDY#s), a writeback (a memory
	// write with CACHE# low, four BRDY#s: the kind a snoop under AHOLD
	// starts), BOFF# aborting open cycles and the restart recorded after
	// it, an ADS# under HLDA counted off the bus, the first clock after
	// BOFF# floating, BOFF# low under HLDA then the CPU's ADS# as HLDA
	// falls, which is recorded ([K5] 5.2.10), and a writeback's ADS#
	// under AHOLD.
	reg f_aborted = 1'b0;		// BOFF# aborted an open cycle
	reg f_hlda_boff = 1'b0;		// BOFF# low with HLDA high, last clock
	reg f_hboff_ads = 1'b0;		// a CPU ADS# right after that
	reg f_hlda_q = 1'b0;		// HLDA in the last clock

	always @(posedge i_clk) begin
		f_hlda_q <= i_hlda;
		if (i_sample && f_boff && b_v0)
			f_aborted <= 1'b1;
		f_hlda_boff <= i_sample && i_hlda && !i_boff_n;
		if (f_hlda_boff && f_cpu_ads)
			f_hboff_ads <= 1'b1;
	end

	wire f_last_brdy = i_sample && !f_boff && !f_float && !i_brdy_n &&
			   b_v0 && b_l40 && b_n0 == 2'd3;

	always @* begin
		cover(emit && !i_flush);
		cover(b_v0 && b_v1);
		cover(f_last_brdy && !b_f0[1]);	// a line fill's last BRDY#
		cover(f_last_brdy && b_f0[3] && b_f0[1] && !b_f0[0]);
		// a writeback's ADS# under AHOLD, at the inquire's line
		cover(f_cpu_ads && f_ahold_q && f_inq_ok && i_mio && i_wr &&
		      !i_cache_n && i_a[4:3] != 2'b00);
		cover(i_sample && f_boff && b_v0 && b_v1);
		cover(f_aborted && emit && !i_flush);
		cover(o_offbus && f_hlda_q);
		cover(o_offbus && !f_hlda_q);
		cover(f_hboff_ads && emit && !i_flush);
		cover(i_flush && emit);
	end
`endif
endmodule
