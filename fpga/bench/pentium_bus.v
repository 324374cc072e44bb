`timescale 1ps / 1ps
`default_nettype none
// pentium_bus: a Pentium (P54C) and its chipset as the capture board sees
// them on the bus pins. It plays a list of bus cycles (cycles.hex, written
// by tbgen) clock by clock. It is written from the processors' data sheets,
// not from the gateware, whose rules it is there to check:
//
//   [K62] AMD-K6-2 Processor Data Sheet, 21850J, February 2000: chapter 4
//         "Signal Descriptions" (4.11 BOFF#), chapter 5 "Bus Cycles";
//   [K6]  AMD-K6 Processor Data Sheet, 20695H, March 1998: 5.25 HLDA,
//         5.26 HOLD, 6.3 "Memory Reads and Writes", "Bus Backoff (BOFF#)"
//         (chapter 6, page 150);
//   [K5]  AMD-K5 Processor Technical Reference Manual, 18524C, November
//         1996: 5.2.5 AHOLD, 5.2.10 BOFF ("BOFF is sampled but not
//         effective when HLDA is asserted"), 5.2.46 SCYC (page 5-114),
//         table 5-19 "Bus Cycle Definitions".
//
// These processors are pin for pin the Pentium's (P54C, Socket 7) bus, and
// their data sheets state its rules clock edge by clock edge. The rules
// played here, each where it is used below:
//
//   - ADS# for one clock opens a cycle with A31..A3, BE7#..BE0#, M/IO#,
//     D/C#, W/R#, CACHE#; the next ADS# comes off the edge after the last
//     BRDY# is sampled, so an idle clock lies between two cycles [K6 6.3];
//     with NA# the next one may come before, two at most open; locked
//     cycles (LOCK#, the interrupt-acknowledge pair) are not pipelined;
//   - a line fill (a memory read with CACHE# low and KEN# low) and a
//     writeback (a memory write with CACHE# low) take four BRDY#s, every
//     other cycle one [K5 table 5-19]; KEN# counts where the CPU samples
//     it, at the first BRDY# or NA# of the cycle, and is random elsewhere
//     (with two cycles open, the NA# of the newer one is its sampling
//     point); a line fill may start mid-line: its ADS# carries the address
//     of the quadword wanted first, A4:A3 not zero;
//   - TD: between pipelined cycles of opposite directions (a write, then
//     a read, or the reverse) a dead clock turns the data bus round, no
//     BRDY# in it [P5, bus states]; NA# may come in it (a cycle marked
//     na_at = 14: NA# in TD, KEN# sampled there) as in T12, the state
//     with two cycles open (NA# with two open: na_at of the newer);
//   - LOCK# from the first ADS# of a locked sequence (the interrupt-
//     acknowledge pair, a read-modify-write) to the last BRDY# of its
//     last cycle: not pipelined, no HLDA inside [K5 table 5-19; K6 5.25].
//   - SCYC [K5 5.2.46 "SCYC (Split Cycle)", page 5-114; P5, SCYC]: a
//     misaligned locked transfer takes more cycles than two under one
//     LOCK# (a read-modify-write of an operand split in two parts: four),
//     and the CPU says so with SCYC, driven from the ADS# of the
//     sequence's first cycle (marked "scyc") to that cycle's last BRDY#;
//     low in the sequence's other cycles. Outside locked cycles SCYC is
//     undefined ("not driven or not meaningful"): random levels there,
//     and while the CPU floats the bus. The sampler does not read it;
//   - BOFF# sampled low aborts every cycle in progress, one whose ADS# is
//     in that clock included, and wins over a BRDY# of the same clock; the
//     CPU floats its outputs off the edge where it samples BOFF# low until
//     the edge where it samples it high, and restarts the aborted cycles
//     from their beginning after that [K62 4.11; K6 page 150]. So ADS#, A,
//     BE# and the control pins float in the first clock with BOFF# high
//     too, and the earliest restart ADS# is a clock later. A floating ADS#
//     may read low (a BOFF# episode marked "float" plays that);
//   - HOLD sampled high: the CPU finishes its cycles, starts no new one
//     (a locked pair is finished first), asserts HLDA one edge after the
//     last BRDY# (one edge after HOLD, the bus idle) and floats the bus in
//     every clock where HLDA is high; HLDA falls one edge after HOLD is
//     sampled low, and the CPU may drive a cycle in that clock [K6 5.25,
//     5.26]. HOLD is the board's hold output (ignored with +deaf) or the
//     chipset's own request for another bus master, which runs cycles of
//     its own (ADS#, BRDY#s) while HLDA is high;
//   - BOFF# is sampled but not effective while HLDA is asserted [K5
//     5.2.10]: with HLDA high it aborts nothing and does not float the
//     next clock, so the CPU may drive an ADS# in the clock where HLDA
//     falls even when BOFF# was low in the clock before (a cycle marked
//     "hlda_boff" plays that: the chipset's BOFF# in the last clock of
//     HLDA before it);
//   [P5]  Pentium Processor Family Developer's Manual, vol. 1 (Intel
//         241428), EADS# and HITM#: HITM# is driven two clocks after the
//         EADS# of an inquire that hit a modified line, until the last
//         BRDY# of its writeback; EADS# is ignored while HITM# is low.
//
//   - a snoop writeback under AHOLD [K5 5.2.1, 5.2.5]: the chipset raises
//     AHOLD; the CPU floats A31..A3 from the next clock on, as long as
//     AHOLD is high; the chipset drives the inquire address there with
//     EADS# for one clock (A4:A3 no part of it: random); HITM# falls two
//     clocks after EADS# (a modified line hit) and a clock later the CPU
//     runs the writeback, AHOLD still high, its ADS# with A31..A3
//     floating (random). HITM# rises after the writeback's last BRDY#, AHOLD with
//     it. The record is the inquire's line, A4:A3 = 0. A cycle marked
//     "inq2" has a second inquire of another line in the episode, a
//     clock after HITM# fell: the CPU ignores it [P5], the writeback
//     (two clocks later) is still the first inquire's line;
//   - AHOLD is sampled but not effective while HLDA is asserted [K5
//     5.2.5]: a cycle marked "hahold" has the chipset's AHOLD and an
//     inquire (EADS#, another line) in the last clock of HLDA before it;
//     AHOLD falls with HLDA, and the CPU's ADS# in the clock where HLDA
//     falls carries its own address.
//
// Pins change TCO after the rising edge: the step after edge k sets what
// edge k+1 samples. Each completed CPU cycle's ADS# clock goes to the
// timestamp log, in completion (= issue) order. `offbus` counts the ADS#s
// that were low in a clock where the CPU floated the bus (HLDA high, or
// BOFF# low in the clock before): cycles of another master, or floating
// pins; they are not records. With +vcd=FILE the pins go to a VCD file
// from the first cycle to the last (pins named as docs/design.md section 5 names
// the channels; 1 ns units: CLK rises at 15 k, pins change at 15 k + 2,
// CLK falls at 15 k + 8).
module pentium_bus #(
	parameter MAX = 16384,		// cycles
	parameter TCO = 2000		// ps
) (
	input  wire        clk,
	input  wire        hold,	// the board's hold output
	input  wire        play,	// play the cycles
	input  wire [31:0] ncyc,	// how many
	output reg         done = 1'b0,	// all played and completed
	output reg  [31:0] completed = 32'd0,
	output reg  [31:0] offbus = 32'd0,

	output reg         ads_n = 1'b1,
	output reg  [31:3] a = 29'd0,
	output reg  [7:0]  be_n = 8'hff,
	output reg         mio = 1'b0,
	output reg         dc = 1'b0,
	output reg         wr = 1'b0,
	output reg         cache_n = 1'b1,
	output reg         brdy_n = 1'b1,
	output reg         na_n = 1'b1,
	output reg         ken_n = 1'b1,
	output reg         boff_n = 1'b1,
	output reg         lock_n = 1'b1,
	output reg         hlda = 1'b0,
	output reg         ahold = 1'b0,
	output reg         eads_n = 1'b1,
	output reg         hitm_n = 1'b1,
	output reg         scyc = 1'b0
);
	reg [103:0] cyc [0:MAX-1];
	reg        boffed [0:MAX-1];	// restarted once already
	reg        mastered [0:MAX-1];	// the other master went before it

	// fields of a cycle (layout: tbgen.c write_cycles)
	function [31:0] f_addr(input [103:0] c); f_addr = c[31:0]; endfunction
	function [7:0] f_be(input [103:0] c); f_be = c[39:32]; endfunction
	function [2:0] f_master(input [103:0] c); f_master = c[42:40];
	endfunction
	function f_float(input [103:0] c); f_float = c[43]; endfunction
	function f_mio(input [103:0] c); f_mio = c[47]; endfunction
	function f_wr(input [103:0] c); f_wr = c[45]; endfunction
	function f_cache_n(input [103:0] c); f_cache_n = c[44]; endfunction
	function f_ken_n(input [103:0] c); f_ken_n = c[48]; endfunction
	function f_lock(input [103:0] c); f_lock = c[49]; endfunction
	function f_junk(input [103:0] c); f_junk = c[50]; endfunction
	function f_snoop(input [103:0] c); f_snoop = c[51]; endfunction
	function [23:0] f_gap(input [103:0] c); f_gap = c[75:52]; endfunction
	function [3:0] f_w0(input [103:0] c); f_w0 = c[79:76]; endfunction
	function [3:0] f_wb(input [103:0] c); f_wb = c[83:80]; endfunction
	function [3:0] f_na(input [103:0] c); f_na = c[87:84]; endfunction
	function [3:0] f_boff(input [103:0] c); f_boff = c[91:88]; endfunction
	function [7:0] f_boff_len(input [103:0] c); f_boff_len = c[99:92];
	endfunction
	// the chipset drives BOFF# in the last clock of HLDA before it
	function f_hlda_boff(input [103:0] c); f_hlda_boff = c[100];
	endfunction
	// a second inquire while HITM# is low, ignored [P5]
	function f_inq2(input [103:0] c); f_inq2 = c[101]; endfunction
	// AHOLD and an inquire in the last clock of HLDA before it
	function f_hahold(input [103:0] c); f_hahold = c[102]; endfunction
	// the first cycle of a split locked sequence: SCYC
	function f_scyc(input [103:0] c); f_scyc = c[103]; endfunction
	// KEN# says how many transfers: a memory read with CACHE# low
	function f_needs_ken(input [103:0] c);
		f_needs_ken = f_mio(c) && !f_wr(c) && !f_cache_n(c);
	endfunction

	// the CPU's open cycles, 0 the oldest
	integer q_idx [0:1], q_got [0:1], q_len [0:1], q_age [0:1],
		q_wait [0:1];
	reg     q_na [0:1], q_ken [0:1];
	reg [63:0] q_ts [0:1];
	integer qn = 0;
	integer issue = 0;		// next cycle to issue
	integer gap_left = 0;		// clocks before it may be
	integer boff_left = 0;		// clocks of BOFF# still to drive
	reg     boff_float = 1'b0;	// this episode's ADS# floats low
	reg     boff_was = 1'b0;	// BOFF# driven low in the last clock
	reg     hold_q = 1'b0;		// HOLD as the CPU sampled it: this edge
	reg     hold_q1 = 1'b0;		// and the one before
	reg     idle_q = 1'b1;		// no CPU cycle open at this edge
	reg     idle_q1 = 1'b1;		// nor at the one before
	reg     last_locked = 1'b0;	// the last cycle issued was locked
	reg [63:0] clocks = 64'd0;	// bus clocks since play began
	reg     playing = 1'b0;
	reg     deaf = 1'b0;		// +deaf: the CPU ignores the board
	integer tsf = 0, vcd = 0, i;
	reg [8*256-1:0] name;

	// the other master: cycles still to run, its open cycle
	reg     m_req = 1'b0;		// the chipset's HOLD request
	integer m_left = 0, m_got = 0, m_len = 0, m_wait = 0;
	reg     m_open = 1'b0;
	reg     hlda_was = 1'b0;	// HLDA in the last clock
	integer snoop_k = 0;		// clocks of this AHOLD episode
	integer snoop_max = 5;		// its writeback's ADS# at this clock
	reg     hahold = 1'b0;		// AHOLD in HLDA's last clock: drop it
	reg     td_next = 1'b0;		// the next clock is TD
	reg     td_now = 1'b0;		// this one is
	reg     snoop_wb = 1'b0;	// its writeback issued, not complete
	reg     scyc_on = 1'b0;		// SCYC: its cycle issued
	reg     scyc_end = 1'b0;	// ... and ended in this clock
	integer scyc_idx = 0;		// that cycle
	reg [31:0] scyc_rng = 32'h2545f491;	// SCYC's random levels

	initial begin
		if (!$value$plusargs("cycles=%s", name)) begin
			$display("FAIL: pentium_bus: +cycles=FILE missing");
			$finish;
		end
		$readmemh(name, cyc);
		for (i = 0; i < MAX; i = i + 1) begin
			boffed[i] = 1'b0;
			mastered[i] = 1'b0;
		end
		if ($value$plusargs("ts=%s", name))
			tsf = $fopen(name, "w");
		if ($test$plusargs("deaf"))
			deaf = 1'b1;
	end

	// ---- the VCD ----------------------------------------------------------
	// pins in channel order; 0 is CLK
	wire [52:0] pv = {scyc, hitm_n, eads_n, ahold, hlda, lock_n, boff_n, ken_n, na_n, brdy_n,
			  cache_n, wr, dc, mio, be_n, a, ads_n, clk};
	reg  [52:0] pv_last;
	reg  [64:0] vcd_end = 65'h1ffffffffffffffff;

	function [8*8-1:0] chan(input integer k);
		begin
			if (k == 0) chan = "clk";
			else if (k == 1) chan = "ads_n";
			else if (k < 31) chan = 0;
			else if (k < 39) chan = 0;
			else case (k)
			39: chan = "mio";
			40: chan = "dc";
			41: chan = "wr";
			42: chan = "cache_n";
			43: chan = "brdy_n";
			44: chan = "na_n";
			45: chan = "ken_n";
			46: chan = "boff_n";
			47: chan = "lock_n";
			48: chan = "hlda";
			49: chan = "ahold";
			50: chan = "eads_n";
			51: chan = "hitm_n";
			default: chan = "scyc";
			endcase
		end
	endfunction

	task vcd_open;
		integer k;
		begin
			if ($value$plusargs("vcd=%s", name)) begin
				vcd = $fopen(name, "w");
				$fwrite(vcd, "$version bach fpga/bench/pentium_bus.v $end\n");
				$fwrite(vcd, "$timescale 1 ns $end\n");
				$fwrite(vcd, "$scope module pentium $end\n");
				for (k = 0; k < 53; k = k + 1)
					if (k >= 2 && k < 31)
						$fwrite(vcd, "$var wire 1 %c a%0d $end\n",
							33 + k, k + 1);
					else if (k >= 31 && k < 39)
						$fwrite(vcd, "$var wire 1 %c be%0d_n $end\n",
							33 + k, k - 31);
					else
						$fwrite(vcd, "$var wire 1 %c %0s $end\n",
							33 + k, chan(k));
				$fwrite(vcd, "$upscope $end\n$enddefinitions $end\n");
				$fwrite(vcd, "#0\n$dumpvars\n");
				for (k = 0; k < 53; k = k + 1)
					$fwrite(vcd, "%b%c\n", k == 0 ? 1'b1 : pv[k],
						33 + k);
				$fwrite(vcd, "$end\n");
				pv_last = pv;
			end
		end
	endtask

	// the pins of this clock, after they changed
	task vcd_pins;
		integer k;
		begin
			$fwrite(vcd, "#%0d\n", clocks * 15 + 2);
			for (k = 1; k < 53; k = k + 1)
				if (pv[k] !== pv_last[k])
					$fwrite(vcd, "%b%c\n", pv[k], 33 + k);
			pv_last = pv;
		end
	endtask

	// ---- one clock --------------------------------------------------------
	task complete_head;
		begin
			if (scyc_on && q_idx[0] == scyc_idx)
				scyc_end = 1'b1;
			if (tsf != 0)
				$fwrite(tsf, "%0d\n", q_ts[0]);
			completed = completed + 1;
			q_idx[0] = q_idx[1]; q_got[0] = q_got[1];
			q_len[0] = q_len[1]; q_age[0] = q_age[1];
			q_wait[0] = q_wait[1]; q_na[0] = q_na[1];
			q_ken[0] = q_ken[1]; q_ts[0] = q_ts[1];
			qn = qn - 1;
		end
	endtask

	// BOFF# from this clock, len clocks: every cycle open at the edge
	// that samples it is aborted and restarts, from the oldest
	task back_off(input [7:0] len, input fl);
		begin
			boff_n = 1'b0;
			if (qn > 0)
				issue = q_idx[0];
			qn = 0;
			boff_left = len - 1;
			boff_float = fl;
			gap_left = 0;
		end
	endtask

	// KEN# where the CPU samples it: the first BRDY# or NA# of the cycle
	task take_ken(input integer k, input [103:0] c);
		begin
			if (!q_ken[k]) begin
				q_ken[k] = 1'b1;
				ken_n = f_ken_n(c);
				q_len[k] = f_ken_n(c) ? 1 : 4;
			end
		end
	endtask

	// the pins the CPU no longer drives: random levels, ADS# high (or
	// low, for a floating ADS#)
	task float_pins(input ads_low);
		begin
			ads_n = !ads_low;
			a = $random;
			be_n = $random;
			{mio, dc, wr, cache_n} = $random;
		end
	endtask

	// the other master's cycle while HLDA is high: its ADS#, then one or
	// four BRDY#s from the chipset
	task master_step;
		begin
			if (m_open) begin
				if (m_wait > 0) begin
					m_wait = m_wait - 1;
				end else begin
					brdy_n = 1'b0;
					na_n = $random;
					m_got = m_got + 1;
					if (m_got == m_len) begin
						m_open = 1'b0;
						m_left = m_left - 1;
					end else begin
						m_wait = $urandom % 2;
					end
				end
			end else if (m_left > 0 && hlda_was) begin
				// HLDA seen at this edge: the master drives a cycle
				float_pins(1'b1);
				m_open = 1'b1;
				m_got = 0;
				m_len = ($urandom % 2) ? 4 : 1;
				m_wait = $urandom % 3;
			end
		end
	endtask

	task step;
		reg [103:0] c, h;
		integer qn0, done_now;
		reg na0, lock_open, lock_pair, floating, can, hold_in;
		begin
			ads_n = 1'b1;
			brdy_n = 1'b1;
			na_n = 1'b1;
			boff_n = 1'b1;
			ken_n = $random;
			if (issue < ncyc && f_junk(cyc[issue])) begin
				a = $random;
				be_n = $random;
				{mio, dc, wr, cache_n} = $random;
			end
			if (gap_left > 0)
				gap_left = gap_left - 1;
			td_now = td_next;
			td_next = 1'b0;
			if (scyc_end) begin
				scyc_on = 1'b0;
				scyc_end = 1'b0;
			end
			// AHOLD [K5 5.2.1, 5.2.5]: the address bus floats from
			// the clock after AHOLD, EADS# with the inquire in that
			// clock, HITM# two clocks later; after the writeback's
			// last BRDY#, AHOLD and HITM# go, and A31..A3 are the
			// CPU's again only a clock after that
			eads_n = 1'b1;
			if (hahold) begin
				ahold = 1'b0;
				hahold = 1'b0;
			end
			if (snoop_wb && qn == 0) begin
				ahold = 1'b0;
				hitm_n = 1'b1;
				snoop_k = 0;
				snoop_wb = 1'b0;
				gap_left = 1;
			end else if (snoop_k > 0) begin
				a = $random;
				if (snoop_k == 1) begin
					a[31:5] = f_addr(cyc[issue]) >> 5;
					eads_n = 1'b0;
				end
				if (snoop_k == 3)
					hitm_n = 1'b0;
				if (snoop_k == 4 && snoop_max == 7) begin
					// another line, HITM# low: ignored
					a[31:5] = (f_addr(cyc[issue]) ^
						   32'h00000800) >> 5;
					eads_n = 1'b0;
				end
				if (snoop_k < snoop_max)
					snoop_k = snoop_k + 1;
			end
			qn0 = qn;
			na0 = qn > 0 && q_na[0];
			done_now = 0;
			// BOFF# low at this edge: the CPU floats the bus in this
			// clock, the first with BOFF# high included [K62 4.11]
			floating = boff_was;
			lock_pair = last_locked && issue < ncyc && f_lock(cyc[issue]);

			// HLDA [K6 5.25]: one edge after HOLD was sampled high
			// with the bus idle (after the last BRDY#); low one edge
			// after HOLD was sampled low; never inside a locked pair
			if (hlda && !hold_q1)
				hlda = 1'b0;
			else if (!hlda && hold_q1 && idle_q1 && idle_q &&
				 !lock_pair)
				hlda = 1'b1;

			if (boff_left > 0) begin
				// BOFF# goes on; the bus floats
				boff_n = 1'b0;
				boff_left = boff_left - 1;
				float_pins(boff_float);
			end else if (floating) begin
				// the first clock with BOFF# high: still floating
				float_pins(boff_float);
			end else if (hlda) begin
				// the bus is the other master's
				master_step;
				// HLDA falls at the next edge: the chipset's
				// BOFF# now is sampled, and ignored [K5 5.2.10]
				if (!hold_q && issue < ncyc &&
				    f_hlda_boff(cyc[issue]))
					boff_n = 1'b0;
				// and AHOLD with an inquire, not effective
				// under HLDA [K5 5.2.5]; it falls with HLDA
				if (!hold_q && issue < ncyc &&
				    f_hahold(cyc[issue])) begin
					ahold = 1'b1;
					hahold = 1'b1;
					a[31:5] = (f_addr(cyc[issue]) ^
						   32'h00001000) >> 5;
					eads_n = 1'b0;
				end
			end else begin
				// a transfer of the oldest cycle, or BOFF# instead
				if (qn > 0 && q_wait[0] > 0) begin
					q_wait[0] = q_wait[0] - 1;
				end else if (qn > 0) begin
					h = cyc[q_idx[0]];
					if (f_boff(h) != 0 && f_boff(h) != 15 &&
					    !boffed[q_idx[0]] &&
					    q_got[0] + 1 == f_boff(h)) begin
						boffed[q_idx[0]] = 1'b1;
						back_off(f_boff_len(h), f_float(h));
					end else begin
						brdy_n = 1'b0;
						take_ken(0, h);
						q_got[0] = q_got[0] + 1;
						if (q_got[0] == q_len[0]) begin
							last_locked = f_lock(h);
							complete_head;
							done_now = 1;
							// TD: the bus turns round
							if (qn > 0 && f_wr(h) !=
							    f_wr(cyc[q_idx[0]])) begin
								td_next = 1'b1;
								if (q_wait[0] == 0)
									q_wait[0] = 1;
							end
						end else begin
							q_wait[0] = f_wb(h);
						end
					end
				end
				// NA# for the newest open cycle that has not had
				// one, at its time; KEN# is sampled there
				if (boff_n && qn == 1 && qn0 == 1 && !done_now &&
				    !q_na[0] && (f_na(cyc[q_idx[0]]) == 14 ?
						 td_now :
						 f_na(cyc[q_idx[0]]) != 0 &&
						 q_age[0] == f_na(cyc[q_idx[0]]))) begin
					// (na_at 14: in TD)
					na_n = 1'b0;
					q_na[0] = 1'b1;
					take_ken(0, cyc[q_idx[0]]);
				end else if (boff_n && qn == 2 && qn0 == 2 &&
					     q_na[0] && !q_na[1] &&
					     f_na(cyc[q_idx[1]]) != 0 &&
					     q_age[1] == f_na(cyc[q_idx[1]])) begin
					na_n = 1'b0;
					q_na[1] = 1'b1;
					take_ken(1, cyc[q_idx[1]]);
				end else if (boff_n && qn == 1 && done_now &&
					     qn0 == 2 && !q_na[0] &&
					     f_na(cyc[q_idx[0]]) != 0 &&
					     q_age[0] == f_na(cyc[q_idx[0]])) begin
					// the older one ended in this clock
					na_n = 1'b0;
					q_na[0] = 1'b1;
					take_ken(0, cyc[q_idx[0]]);
				end
				// the other master asks for the bus before this
				// cycle: the chipset's HOLD, until it is done
				if (!m_req && issue < ncyc && gap_left == 0 &&
				    f_master(cyc[issue]) != 0 &&
				    !mastered[issue] && !lock_pair) begin
					m_req = 1'b1;
					m_left = f_master(cyc[issue]);
					mastered[issue] = 1'b1;
				end
				// ADS#: not while HOLD is seen (but for the second
				// of a locked pair), not with BOFF# driven
				c = cyc[issue];
				lock_open = (qn > 0 && f_lock(cyc[q_idx[0]])) ||
					    (qn > 1 && f_lock(cyc[q_idx[1]]));
				can = playing && boff_n && issue < ncyc &&
				      gap_left == 0 && !m_req &&
				      (!hold_q || lock_pair) &&
				      (qn0 == 0 || (qn0 == 1 && na0 && !f_lock(c) &&
						    !lock_open));
				if (can && f_snoop(c) && snoop_k < snoop_max) begin
					// AHOLD first, on an idle bus; the
					// writeback follows HITM#
					if (snoop_k == 0 && qn0 == 0) begin
						ahold = 1'b1;
						snoop_k = 1;
						snoop_max = f_inq2(c) ? 7 : 5;
					end
				end else if (can && f_boff(c) == 15 && !boffed[issue]) begin
					// BOFF# in the clock of the ADS#, when
					// nothing else happens in it
					if (brdy_n && na_n) begin
						ads_n = 1'b0;
						{a, be_n} = {f_addr(c) >> 3, f_be(c)};
						{mio, dc, wr, cache_n} = c[47:44];
						boffed[issue] = 1'b1;
						back_off(f_boff_len(c), f_float(c));
					end
				end else if (can) begin
					ads_n = 1'b0;
					{a, be_n} = {f_addr(c) >> 3, f_be(c)};
					if (snoop_k != 0) begin
						// the writeback: A31..A3 float
						a = $random;
						snoop_wb = 1'b1;
					end
					{mio, dc, wr, cache_n} = c[47:44];
					q_idx[qn] = issue;
					q_got[qn] = 0;
					q_age[qn] = 0;
					q_wait[qn] = f_w0(c);
					q_na[qn] = 1'b0;
					q_ken[qn] = !f_needs_ken(c);
					q_len[qn] = (f_mio(c) && f_wr(c) &&
						     !f_cache_n(c)) ? 4 : 1;
					q_ts[qn] = clocks;
					qn = qn + 1;
					last_locked = f_lock(c);
					if (f_lock(c) && f_scyc(c)) begin
						scyc_on = 1'b1;
						scyc_idx = issue;
					end
					issue = issue + 1;
					if (issue < ncyc)
						gap_left = f_gap(cyc[issue]);
				end
			end
			// the other master's request ends with its last cycle
			if (m_req && m_left == 0 && !m_open)
				m_req = 1'b0;
			// an ADS# in a clock where the CPU floats the bus
			if (!ads_n && (floating || hlda))
				offbus = offbus + 1;
			lock_n = !((qn > 0 && f_lock(cyc[q_idx[0]])) ||
				   (last_locked && issue < ncyc &&
				    f_lock(cyc[issue])));
			if (hlda)
				lock_n = 1'b1;
			// SCYC: the split sequence's first cycle, ADS# to its
			// last BRDY#; random where it means nothing
			scyc_rng = scyc_rng ^ (scyc_rng << 13);
			scyc_rng = scyc_rng ^ (scyc_rng >> 17);
			scyc_rng = scyc_rng ^ (scyc_rng << 5);
			if (!lock_n && !hlda && !floating && boff_n)
				scyc = scyc_on;
			else
				scyc = scyc_rng[0];
			for (i = 0; i < qn; i = i + 1)
				q_age[i] = q_age[i] + 1;
			// BOFF# under HLDA floats nothing [K5 5.2.10]
			boff_was = !boff_n && !hlda;
			hlda_was = hlda;
			// the next edge: is a CPU cycle open then?
			idle_q1 = idle_q;
			idle_q = qn == 0 && boff_n;
		end
	endtask

	always @(posedge clk) begin
		// what the CPU samples at this edge: HOLD, the board's or the
		// chipset's
		hold_q1 = hold_q;
		hold_q = (hold && !deaf) || m_req;
		#(TCO);
		if (play && !playing) begin
			playing = 1'b1;
			vcd_open;
		end
		if (playing && !done) begin
			step;
			if (vcd != 0)
				vcd_pins;
			if (issue >= ncyc && qn == 0 && boff_left == 0 &&
			    !boff_was && !m_req) begin
				done = 1'b1;
				vcd_end = {1'b0, clocks} + 65'd4;
			end
			clocks = clocks + 1;
		end else if (playing) begin
			// all played: the chipset's strobes go high, BRDY#
			// with them (a BRDY# held low from the last transfer
			// would be one with no cycle open [K6 6.3: BRDY# is
			// the system's answer to a cycle in progress])
			ads_n = 1'b1;
			brdy_n = 1'b1;
			na_n = 1'b1;
			boff_n = 1'b1;
			eads_n = 1'b1;
			if (vcd != 0 && {1'b0, clocks} >= vcd_end) begin
				$fclose(vcd);
				vcd = 0;
			end
			if (vcd != 0)
				vcd_pins;
			clocks = clocks + 1;
		end
	end

	always @(posedge clk)
		if (vcd != 0)
			$fwrite(vcd, "#%0d\n1!\n", clocks * 15);

	always @(negedge clk)
		if (vcd != 0)
			$fwrite(vcd, "#%0d\n0!\n", clocks * 15 - 7);
endmodule
