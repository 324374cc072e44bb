`timescale 1ps / 1ps
`default_nettype none
// pentium_bus: a Pentium (P54C) and its chipset, as the capture board sees
// them on the bus pins: plays a list of bus cycles (cycles.hex, written by
// tbgen) clock by clock, the way the CPU drives ADS# and the chipset
// answers with BRDY#, NA#, KEN# and BOFF#:
//
//   - ADS# for one clock opens a cycle; the next ADS# comes after the last
//     BRDY# of the open cycle, or earlier once NA# was given (at most two
//     open); locked cycles (LOCK# low) are never pipelined;
//   - a cycle transfers once (a single) or four times (a line fill: a
//     memory read with CACHE# and KEN# low; a writeback), with wait
//     states before each BRDY#;
//   - KEN# is driven right only where the board must take it, at the
//     first BRDY# or NA# of the cycle: it is random everywhere else;
//   - BOFF# instead of a BRDY# aborts every open cycle; the CPU restarts
//     them, in order, a clock after BOFF# ends (once per cycle: a restart
//     runs through). A cycle may also get BOFF# in the clock of its ADS#;
//   - HOLD from the board (ignored with +deaf): no new cycle once HOLD is
//     seen, HLDA when the bus is idle, until HOLD goes (never inside a
//     locked pair).
//
// Pins change TCO after the rising edge. Each completed cycle's ADS# clock
// goes to the timestamp log, in completion (= issue) order; with +vcd=FILE
// the pins go to a VCD file from the first cycle to the last (pins named
// as design section 5 names the channels; 1 ns units: CLK rises at 15 k,
// pins change at 15 k + 2, CLK falls at 15 k + 8).
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
	output reg         hlda = 1'b0
);
	reg [99:0] cyc [0:MAX-1];
	reg        boffed [0:MAX-1];	// restarted once already

	// fields of a cycle (layout: tbgen.c write_cycles)
	function [31:0] f_addr(input [99:0] c); f_addr = c[31:0]; endfunction
	function [7:0] f_be(input [99:0] c); f_be = c[39:32]; endfunction
	function f_mio(input [99:0] c); f_mio = c[47]; endfunction
	function f_dc(input [99:0] c); f_dc = c[46]; endfunction
	function f_wr(input [99:0] c); f_wr = c[45]; endfunction
	function f_cache_n(input [99:0] c); f_cache_n = c[44]; endfunction
	function f_ken_n(input [99:0] c); f_ken_n = c[48]; endfunction
	function f_lock(input [99:0] c); f_lock = c[49]; endfunction
	function f_junk(input [99:0] c); f_junk = c[50]; endfunction
	function [23:0] f_gap(input [99:0] c); f_gap = c[75:52]; endfunction
	function [3:0] f_w0(input [99:0] c); f_w0 = c[79:76]; endfunction
	function [3:0] f_wb(input [99:0] c); f_wb = c[83:80]; endfunction
	function [3:0] f_na(input [99:0] c); f_na = c[87:84]; endfunction
	function [3:0] f_boff(input [99:0] c); f_boff = c[91:88]; endfunction
	function [7:0] f_boff_len(input [99:0] c); f_boff_len = c[99:92];
	endfunction
	// waits for KEN# to say how many transfers
	function f_needs_ken(input [99:0] c);
		f_needs_ken = f_mio(c) && !f_wr(c) && !f_cache_n(c);
	endfunction

	// the open cycles, 0 the oldest
	integer q_idx [0:1], q_got [0:1], q_len [0:1], q_age [0:1],
		q_wait [0:1];
	reg     q_na [0:1], q_ken [0:1];
	reg [63:0] q_ts [0:1];
	integer qn = 0;
	integer issue = 0;		// next cycle to issue
	integer gap_left = 0;		// clocks before it may be
	integer boff_left = 0;		// clocks of BOFF# to come
	integer after_boff = 0;		// idle clocks after BOFF#
	reg     hold_q = 1'b0;
	reg     last_locked = 1'b0;	// the last cycle issued was locked
	reg [63:0] clocks = 64'd0;	// bus clocks since play began
	reg     playing = 1'b0;
	integer tsf = 0, vcd = 0, i;
	reg [8*256-1:0] name;

	initial begin
		if (!$value$plusargs("cycles=%s", name)) begin
			$display("FAIL: pentium_bus: +cycles=FILE missing");
			$finish;
		end
		$readmemh(name, cyc);
		for (i = 0; i < MAX; i = i + 1)
			boffed[i] = 1'b0;
		if ($value$plusargs("ts=%s", name))
			tsf = $fopen(name, "w");
	end

	// ---- the VCD ----------------------------------------------------------
	// pins in channel order; 0 is CLK
	wire [48:0] pv = {hlda, lock_n, boff_n, ken_n, na_n, brdy_n, cache_n,
			  wr, dc, mio, be_n, a, ads_n, clk};
	reg  [48:0] pv_last;
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
			default: chan = "hlda";
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
				for (k = 0; k < 49; k = k + 1)
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
				for (k = 0; k < 49; k = k + 1)
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
			for (k = 1; k < 49; k = k + 1)
				if (pv[k] !== pv_last[k])
					$fwrite(vcd, "%b%c\n", pv[k], 33 + k);
			pv_last = pv;
		end
	endtask

	// ---- one clock --------------------------------------------------------
	task complete_head;
		begin
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

	// BOFF#: every open cycle restarts, from the oldest
	task back_off(input [7:0] len);
		begin
			boff_n = 1'b0;
			if (qn > 0)
				issue = q_idx[0];
			qn = 0;
			boff_left = len - 1;
			after_boff = boff_left == 0 ? 1 : 0;
			gap_left = 0;
		end
	endtask

	task take_ken(input integer k, input [99:0] c);
		begin
			if (!q_ken[k]) begin
				q_ken[k] = 1'b1;
				ken_n = f_ken_n(c);
				q_len[k] = f_ken_n(c) ? 1 : 4;
			end
		end
	endtask

	task step;
		reg [99:0] c, h;
		integer qn0, done_now;
		reg na0, lock_open, lock_pair, can;
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
			qn0 = qn;
			na0 = qn > 0 && q_na[0];
			done_now = 0;

			if (boff_left > 0) begin
				boff_n = 1'b0;
				boff_left = boff_left - 1;
				if (boff_left == 0)
					after_boff = 1;
			end else begin
				if (after_boff > 0)
					after_boff = after_boff - 1;
				// a transfer of the oldest cycle, or BOFF# instead
				if (qn > 0 && q_wait[0] > 0) begin
					q_wait[0] = q_wait[0] - 1;
				end else if (qn > 0) begin
					h = cyc[q_idx[0]];
					if (f_boff(h) != 0 && f_boff(h) != 15 &&
					    !boffed[q_idx[0]] &&
					    q_got[0] + 1 == f_boff(h)) begin
						boffed[q_idx[0]] = 1'b1;
						back_off(f_boff_len(h));
					end else begin
						brdy_n = 1'b0;
						take_ken(0, h);
						q_got[0] = q_got[0] + 1;
						if (q_got[0] == q_len[0]) begin
							last_locked = f_lock(h);
							complete_head;
							done_now = 1;
						end else begin
							q_wait[0] = f_wb(h);
						end
					end
				end
				// NA# for the one open cycle, at its time
				if (boff_n && !done_now && qn == 1 && qn0 == 1 &&
				    !q_na[0] && f_na(cyc[q_idx[0]]) != 0 &&
				    q_age[0] == f_na(cyc[q_idx[0]])) begin
					na_n = 1'b0;
					q_na[0] = 1'b1;
					take_ken(0, cyc[q_idx[0]]);
				end
				// ADS#
				c = cyc[issue];
				lock_open = (qn > 0 && f_lock(cyc[q_idx[0]])) ||
					    (qn > 1 && f_lock(cyc[q_idx[1]]));
				lock_pair = last_locked && issue < ncyc &&
					    f_lock(c);
				can = playing && boff_n && issue < ncyc &&
				      gap_left == 0 && after_boff == 0 && !hlda &&
				      (!hold_q || lock_pair) &&
				      (qn0 == 0 || (qn0 == 1 && na0 && !f_lock(c) &&
						    !lock_open));
				if (can && f_boff(c) == 15 && !boffed[issue]) begin
					// BOFF# in the clock of the ADS#,
					// when nothing else happens in it
					if (brdy_n && na_n) begin
						ads_n = 1'b0;
						{a, be_n} = {f_addr(c) >> 3, f_be(c)};
						{mio, dc, wr, cache_n} = c[47:44];
						boffed[issue] = 1'b1;
						back_off(f_boff_len(c));
					end
				end else if (can) begin
					ads_n = 1'b0;
					{a, be_n} = {f_addr(c) >> 3, f_be(c)};
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
					issue = issue + 1;
					if (issue < ncyc)
						gap_left = f_gap(cyc[issue]);
				end
			end
			// HOLD: HLDA once the bus is idle
			if (hlda && !hold_q)
				hlda = 1'b0;
			else if (!hlda && hold_q && qn == 0 && ads_n && boff_n &&
				 !(last_locked && issue < ncyc &&
				   f_lock(cyc[issue])))
				hlda = 1'b1;
			lock_n = !((qn > 0 && f_lock(cyc[q_idx[0]])) ||
				   (last_locked && issue < ncyc &&
				    f_lock(cyc[issue])));
			for (i = 0; i < qn; i = i + 1)
				q_age[i] = q_age[i] + 1;
		end
	endtask

	reg deaf = 1'b0;		// +deaf: the CPU ignores HOLD

	initial
		if ($test$plusargs("deaf"))
			deaf = 1'b1;

	always @(posedge clk) begin
		hold_q = hold && !deaf;
		#(TCO);
		if (play && !playing) begin
			playing = 1'b1;
			vcd_open;
		end
		if (playing && !done) begin
			step;
			if (vcd != 0)
				vcd_pins;
			if (issue >= ncyc && qn == 0 && boff_left == 0) begin
				done = 1'b1;
				vcd_end = {1'b0, clocks} + 65'd4;
			end
			clocks = clocks + 1;
		end else if (playing) begin
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
