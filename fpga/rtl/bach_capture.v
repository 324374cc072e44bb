`default_nettype none
// bach_capture: everything on the bus clock. It runs a capture from the
// host's START to its STOP (i_run, from the USB clock), and in that time
//
//   1. counts the timestamp (bus clocks since START);
//   2. turns bus cycles into records (bach_sampler);
//   3. drops the cycle types the filter leaves out (they take no index);
//   4. writes each record with its delta into the record FIFO, and a
//      boundary into the boundary FIFO where the delta does not fit in 16
//      bits or records were lost before it;
//   5. applies the loss policy: `stall` raises o_hold at the high
//      watermark and drops it at the low one; when the FIFO is full anyway
//      (with `drop`, or a CPU slow to let go of the bus) records are
//      counted lost, and the FIFO must drain to three quarters before
//      records are taken again, so that losses come in few episodes and
//      frames stay long;
//   6. keeps the STATUS counters, copied for the USB side on request,
//      among them the ADS#s seen while the CPU was off the bus (HLDA
//      high, or BOFF# floating it), which are not records;
//   7. after STOP, forces out the cycles still open and writes an END
//      boundary carrying the last losses.
//
// A record goes: sampler register, filter register, then the write
// registers of both FIFOs, one clock each. The FIFO fill it is checked
// against is a few clocks old, so SLACK entries stay free as a margin.
//
// Configuration inputs come from the USB clock but change only while no
// capture runs (CONFIGURE is refused then); they are read here well after
// they settled. Every register here is on the bus clock: b_ for the
// capture's state, k_ for the record stage after the sampler.
module bach_capture #(
	parameter AW = 10,		// record FIFO: 2^AW entries
	parameter BAW = 8,		// boundary FIFO: 2^BAW entries
	parameter TW = 48,		// timestamp and counter bits
	parameter BW = 1 + (AW + 1) + 2 * TW	// a boundary
) (
	input  wire           i_clk,
	input  wire           i_rst,

	// the bus pins, registered at the pads
	input  wire           i_ads_n,
	input  wire [31:3]    i_a,
	input  wire [7:0]     i_be_n,
	input  wire           i_mio,
	input  wire           i_dc,
	input  wire           i_wr,
	input  wire           i_cache_n,
	input  wire           i_brdy_n,
	input  wire           i_na_n,
	input  wire           i_ken_n,
	input  wire           i_boff_n,
	input  wire           i_hlda,
	input  wire           i_ahold,
	input  wire           i_eads_n,
	input  wire           i_hitm_n,
	output wire           o_hold,	// stall: hold the CPU (to HOLD)

	// from the USB clock (asynchronous)
	input  wire           i_run,	// level: a capture of the bus runs
	input  wire           i_drop,	// policy: 1 drop, 0 stall
	input  wire [15:0]    i_filter,	// bit t: keep type t; 0 keeps all
	input  wire [AW:0]    i_high,	// stall: hold at this fill
	input  wire [AW:0]    i_low,	// and let go at this one
	input  wire           i_zero_tgl, // toggles: zero the counters
	input  wire           i_snap_tgl, // toggles: copy the counters

	// the record FIFO's write side
	output reg            o_we = 1'b0,
	output reg  [63:0]    o_wdata,	// record, delta
	input  wire [AW:0]    i_fill,
	// the boundary FIFO's write side
	output reg            o_bwe = 1'b0,
	output reg  [BW-1:0]  o_bdata,	// end, position, lost, timestamp
	input  wire [BAW:0]   i_bfill,

	// counters as copied at the last i_snap_tgl, and the answer toggle
	// (zero before the first copy: the bus clock may never have run)
	output reg  [TW-1:0]  o_records = 0,	// sampled (lost ones included)
	output reg  [TW-1:0]  o_lost = 0,	// lost to a full FIFO
	output reg  [31:0]    o_episodes = 0,	// times o_hold rose
	output reg  [TW-1:0]  o_stalled = 0,	// clocks with o_hold high
	output reg  [TW-1:0]  o_offbus = 0,	// ADS#s with the CPU off the bus
	output wire           o_snap_ack
);
	localparam [1:0] B_IDLE = 2'd0, B_RUN = 2'd1, B_FLUSH = 2'd2,
			 B_END = 2'd3;
	localparam SLACK = 8;
	localparam [AW:0] ROOM = (1 << AW) - SLACK;	// a record fits
	localparam [AW:0] RESUME = (1 << AW) - (1 << (AW - 2));
	localparam [BAW:0] BROOM = (1 << BAW) - SLACK;

	wire b_run, b_zero_tgl, b_snap_tgl;

	bach_sync #(.W(3)) sync_ctl (.i_clk(i_clk),
		.i_d({i_run, i_zero_tgl, i_snap_tgl}),
		.o_q({b_run, b_zero_tgl, b_snap_tgl}));

	reg  [1:0]    b_state = B_IDLE;	// capture state
	reg  [TW-1:0] b_ts = 0;		// bus clocks since START
	reg           b_hold = 1'b0;	// the hold output
	reg           b_room = 1'b0;	// both FIFOs have room, lately
	reg           b_broom = 1'b0;	// the boundary FIFO has room
	reg           b_dropping = 1'b0; // FIFO overflowed, not drained yet
	reg  [AW:0]   b_pos = 0;	// record FIFO position of the next write
	reg  [TW-1:0] b_lost_run = 0;	// lost since the last record written
	reg  [TW-1:0] b_last_ts = 0;	// timestamp of the last one written
	reg           b_put = 1'b0;	// a record was written last clock
	reg  [TW-1:0] b_records = 0, b_lost = 0, b_stalled = 0, b_offbus = 0;
	reg  [31:0]   b_episodes = 0;
	reg           b_zero_seen = 1'b0, b_snap_seen = 1'b0;

	wire start = b_state == B_IDLE && b_run;

	// 1, 2. timestamp and sampler
	wire          s_valid, s_open, s_offbus;
	wire [47:0]   s_rec;
	wire [TW-1:0] s_ts;

	always @(posedge i_clk)
		if (start)
			b_ts <= 0;
		else
			b_ts <= b_ts + 1'b1;

	bach_sampler #(.TW(TW)) sampler (
		.i_clk(i_clk), .i_clear(start), .i_sample(b_state == B_RUN),
		.i_flush(b_state == B_FLUSH), .i_ts(b_ts),
		.i_ads_n(i_ads_n), .i_a(i_a), .i_be_n(i_be_n), .i_mio(i_mio),
		.i_dc(i_dc), .i_wr(i_wr), .i_cache_n(i_cache_n),
		.i_brdy_n(i_brdy_n), .i_na_n(i_na_n), .i_ken_n(i_ken_n),
		.i_boff_n(i_boff_n), .i_hlda(i_hlda),
		.i_ahold(i_ahold), .i_eads_n(i_eads_n), .i_hitm_n(i_hitm_n),
		.o_valid(s_valid), .o_rec(s_rec), .o_ts(s_ts), .o_open(s_open),
		.o_offbus(s_offbus));

	// 3. the filter; and the time since the record before (the one now
	// in k_*, and the last one written): 16 bits, bit 16 set when they
	// may not do. The test is cheap (no 48-bit subtraction): when the
	// timestamps agree above bit 14 the 16-bit difference is exact, and
	// when they do not, a boundary carries the whole timestamp, which at
	// worst breaks a frame once in 32768 clocks more than needed.
	reg           k_valid = 1'b0;	// a record of the sampler
	reg           k_keep = 1'b0;	// which the filter keeps
	reg  [47:0]   k_rec;
	reg  [TW-1:0] k_ts;
	reg  [16:0]   k_dprev, k_dlast;

	function [16:0] since(input [TW-1:0] now, input [TW-1:0] was);
		since = {now[TW-1:15] != was[TW-1:15],
			 now[15:0] - was[15:0]};
	endfunction

	always @(posedge i_clk) begin
		k_valid <= s_valid;
		k_keep <= s_valid &&
			  (i_filter == 16'd0 || i_filter[s_rec[7:4]]);
		k_rec <= s_rec;
		k_ts <= s_ts;
		k_dprev <= since(s_ts, k_ts);
		k_dlast <= since(s_ts, b_last_ts);
	end

	// 4, 5. into the FIFOs, or lost. The delta counts from the last
	// record written: the one before, if it was, else b_last_ts.
	wire [16:0] delta = b_put ? k_dprev : k_dlast;
	wire        need_b = b_lost_run != 0 || delta[16];
	wire        put = k_keep && b_room && !b_dropping;
	wire        lose = k_keep && !put;
	wire        put_end = b_state == B_END && b_broom;

	always @(posedge i_clk) begin
		o_we <= put;
		o_wdata <= {k_rec, delta[15:0]};
		// a boundary names the position of the record written with
		// it, or of the next one for the END
		o_bwe <= (put && need_b) || put_end;
		o_bdata <= {put_end, b_pos, b_lost_run, put_end ? b_ts : k_ts};
		if (put)
			b_pos <= b_pos + 1'b1;
		b_put <= put;
		if (start)
			b_last_ts <= 0;
		else if (put)
			b_last_ts <= k_ts;
	end

	always @(posedge i_clk) begin
		b_room <= i_fill <= ROOM && i_bfill <= BROOM;
		b_broom <= i_bfill <= BROOM;
	end

	// records lost since the last one written
	always @(posedge i_clk)
		if (start || put)
			b_lost_run <= 0;
		else if (lose)
			b_lost_run <= b_lost_run + 1'b1;

	// overflowed: wait for the FIFO to drain to three quarters
	always @(posedge i_clk)
		if (start)
			b_dropping <= 1'b0;
		else if (lose)
			b_dropping <= 1'b1;
		else if (i_fill <= RESUME && b_broom)
			b_dropping <= 1'b0;

	// 5. the hold output (stall policy, while capturing)
	wire hold_on = b_state == B_RUN && !i_drop && i_fill >= i_high;

	always @(posedge i_clk)
		if (b_state != B_RUN || i_drop)
			b_hold <= 1'b0;
		else if (hold_on)
			b_hold <= 1'b1;
		else if (i_fill <= i_low)
			b_hold <= 1'b0;
	assign o_hold = b_hold;

	// 7. the capture: run, flush what is open, write the END
	always @(posedge i_clk)
		if (i_rst)
			b_state <= B_IDLE;
		else case (b_state)
		B_IDLE:  if (b_run) b_state <= B_RUN;
		B_RUN:   if (!b_run) b_state <= B_FLUSH;
		B_FLUSH: if (!s_open && !s_valid && !k_valid)
				 b_state <= B_END;
		default: if (b_broom) b_state <= B_IDLE;
		endcase

	// 6. STATUS counters: START and RESET_COUNTERS zero them
	wire zero = start || b_zero_tgl != b_zero_seen;

	always @(posedge i_clk) begin
		b_zero_seen <= b_zero_tgl;
		if (zero) begin
			b_records <= 0;
			b_lost <= 0;
			b_episodes <= 0;
			b_stalled <= 0;
			b_offbus <= 0;
		end else begin
			if (k_keep)
				b_records <= b_records + 1'b1;
			if (lose)
				b_lost <= b_lost + 1'b1;
			if (b_hold)
				b_stalled <= b_stalled + 1'b1;
			if (hold_on && !b_hold)
				b_episodes <= b_episodes + 1'b1;
			if (s_offbus)
				b_offbus <= b_offbus + 1'b1;
		end
	end

	// the copy for the USB side, which reads it once o_snap_ack follows
	always @(posedge i_clk) begin
		b_snap_seen <= b_snap_tgl;
		if (b_snap_tgl != b_snap_seen) begin
			o_records <= zero ? 0 : b_records;
			o_lost <= zero ? 0 : b_lost;
			o_episodes <= zero ? 0 : b_episodes;
			o_stalled <= zero ? 0 : b_stalled;
			o_offbus <= zero ? 0 : b_offbus;
		end
	end
	assign o_snap_ack = b_snap_seen;
endmodule
