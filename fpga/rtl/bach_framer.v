`default_nettype none
// bach_framer: builds every frame the board sends (docs/board-protocol.md
// sections 2 to 5), a byte a clock, on the USB clock: data frames from the
// record FIFO or the test pattern, and the STATUS, IDENTITY and ACK replies
// that bach_ctrl asks for. Between frames it picks the next: a reply if one
// is waiting, else a data frame once one is due. It works that out in a
// few clocks (S_EV1 to S_DEC), a register stage each, for a 60 MHz clock.
//
// A data frame of the bus is due when it can be closed: it holds FRAME_MAX
// records, or reaches the next boundary (a loss, a timestamp jump, the END
// of the capture), or its first record waited AGE clocks (1 ms), or the
// board holds the CPU (no more records come until the FIFO drains). Its
// records stay in the FIFO until sent: the header needs their count, and
// with TIMING the deltas go before the records, so they are read twice
// (pass 1 the deltas, pass 2 the records, which frees each entry as it
// goes). A boundary at the head of the FIFO is taken in before the frame
// that starts there: its loss goes in the frame's `lost`, its timestamp is
// the frame's. Losses above 2^32 - 1 go out in empty frames first.
//
// Test-pattern frames hold PAT_FRAME records each, from bach_pattern. With
// `drop` the pattern runs on, a record a clock, and a frame takes the last
// PAT_FRAME records sampled once there are that many since the previous
// frame (the records skipped are lost indices); with `stall` it waits for
// the link and loses nothing.
//
// Every byte passes a one-clock stage (o_valid, o_byte) where the CRC is
// taken; the CRC bytes follow a clock later. i_room says the byte queue
// has room for the byte in that stage and one more.
//
// Every register here is on the USB clock. Prefixes name their group:
// u_ the frame being built, h_ its header, d_ the capture, e_ and f_ the
// decision on the next data frame, p_ the test pattern, s_ STATUS values.
module bach_framer #(
	parameter AW = 10,
	parameter BAW = 8,
	parameter TW = 48,
	parameter BW = 1 + (AW + 1) + 2 * TW,
	parameter FRAME_MAX = 512,	// records in a data frame of the bus
	parameter PAT_FRAME = 512,	// records in a test-pattern frame
	parameter AGE = 60000,		// USB clocks a frame may wait: 1 ms
	parameter [511:0] IDENT = 512'd0 // the IDENTITY payload, byte 0 low
) (
	input  wire          i_clk,
	input  wire          i_rst,

	// capture control, from bach_ctrl
	input  wire          i_start,	// pulse: START
	input  wire          i_stop,	// pulse: STOP
	input  wire [1:0]    i_src,	// 0 bus, 1 counter, 2 LFSR
	input  wire          i_timing,	// data frames carry deltas
	input  wire          i_drop,	// policy drop (the pattern's losses)
	input  wire          i_zero,	// pulse: RESET_COUNTERS
	output reg           o_last_sent = 1'b0, // pulse: LAST frame sent

	// replies, from bach_ctrl: i_rq stays up until o_rq_done
	input  wire          i_rq,
	input  wire [7:0]    i_rq_type,	// STATUS, IDENTITY or ACK
	input  wire [31:0]   i_rq_cmd,
	input  wire [31:0]   i_rq_result,
	output reg           o_rq_done = 1'b0,

	// STATUS values of the bus side (stable while a STATUS is built)
	input  wire [TW-1:0] i_st_records,
	input  wire [TW-1:0] i_st_lost,
	input  wire [31:0]   i_st_episodes,
	input  wire [TW-1:0] i_st_stalled,
	input  wire [TW-1:0] i_st_offbus,
	input  wire [31:0]   i_st_hz,

	// record FIFO, read side
	input  wire [AW:0]   i_wptr,
	output wire [AW-1:0] o_raddr,
	input  wire [63:0]   i_rdata,
	output wire [AW:0]   o_free,
	// boundary FIFO, read side
	input  wire [BAW:0]  i_bwptr,
	output wire [BAW-1:0] o_braddr,
	input  wire [BW-1:0] i_bdata,
	output wire [BAW:0]  o_bfree,
	input  wire          i_bus_alive,	// the bus clock runs
	input  wire          i_holding,	// the CPU is held: no more soon

	// bytes out
	output reg           o_valid = 1'b0,
	output reg  [7:0]    o_byte = 8'd0,
	input  wire          i_room
);
	localparam [7:0] T_DATA = 8'd1, T_STATUS = 8'd2, T_IDENTITY = 8'd3;
	localparam [7:0] F_FIRST = 8'h01, F_LAST = 8'h02, F_OVERFLOW = 8'h04,
			 F_TIMING = 8'h08;
	localparam [4:0] S_IDLE = 5'd0, S_EV1 = 5'd1, S_EV2 = 5'd2,
			 S_EV3 = 5'd3, S_DEC = 5'd4, S_PLANW = 5'd5,
			 S_PLAN = 5'd6, S_HEAD = 5'd7, S_HDR = 5'd8,
			 S_STAT = 5'd9, S_IDENT = 5'd10, S_DELTA = 5'd11,
			 S_PREW = 5'd12, S_PRE = 5'd13, S_REC = 5'd14,
			 S_CRCW = 5'd15, S_CRC = 5'd16, S_DONE = 5'd17;
	localparam [TW-1:0] LOST_MAX = {{(TW - 32){1'b0}}, 32'hffffffff};
	localparam [AW:0] FMAX = FRAME_MAX[AW:0];
	localparam [16:0] AGE_MAX = AGE[16:0];
	localparam [15:0] PAT_N = PAT_FRAME[15:0];

	// ---- state ----------------------------------------------------------
	reg  [4:0]    u_st = S_IDLE;	// what is being built
	reg  [6:0]    u_k = 7'd0;	// byte within header, payload or CRC
	reg  [2:0]    u_kb = 3'd0;	// byte within a record or delta
	reg  [15:0]   u_ri = 16'd0;	// record within the frame
	reg  [31:0]   u_crc = 32'd0;	// CRC register
	reg  [31:0]   u_crc_out = 32'd0; // the frame's CRC, as sent
	reg           u_first_byte = 1'b0; // o_byte starts a frame

	// header fields of the frame being built
	reg  [7:0]    h_type = 8'd0, h_flags = 8'd0;
	reg  [31:0]   h_seq = 32'd0, h_plen = 32'd0, h_c = 32'd0, h_d = 32'd0;
	reg  [TW-1:0] h_a = 0, h_b = 0;
	reg  [TW-1:0] h_lost = 0;	// data: lost before it, all of it
	reg           h_last = 1'b0;	// data: LAST, the capture ends
	reg           h_bus = 1'b0;	// data: B is the first record's time
	reg           h_pop_end = 1'b0;	// data: the END boundary goes with it

	// sequence numbers, per frame type
	reg  [31:0]   u_seq_data = 32'd0, u_seq_status = 32'd0;
	reg  [31:0]   u_seq_ident = 32'd0, u_seq_ack = 32'd0;

	// the capture
	reg           d_on = 1'b0;	// data frames are due until LAST
	reg           d_stop = 1'b0;	// STOP asked
	reg           d_first = 1'b0;	// the next data frame is FIRST
	reg  [TW-1:0] d_e = 0;		// index of the next record
	reg  [TW-1:0] d_ts = 0;		// timestamp of the last record sent
	reg  [TW-1:0] d_lost = 0;	// lost before the next record
	reg           d_tsv = 1'b0;	// d_tsa: the next record's timestamp
	reg  [TW-1:0] d_tsa = 0;
	reg           d_end = 1'b0;	// the END is taken in
	reg  [AW:0]   d_fp = 0;		// FIFO position of the next record
	reg           d_has = 1'b0;	// a record waits in the FIFO
	reg  [16:0]   d_age = 17'd0;	// clocks it waited
	reg           d_aged = 1'b0;	// AGE clocks or more
	reg           d_pat = 1'b0;	// pattern: the next frame is placed
	reg  [BAW:0]  u_brp = 0;	// boundary FIFO: the head

	// the test pattern (USB clock: one index a clock)
	reg  [TW-1:0] p_clk = 0;	// clocks since START: index reached
	reg  [TW-1:0] p_lag = 0;	// PAT_FRAME behind (the free generator)
	reg           p_lagging = 1'b0;	// p_lag runs
	reg           p_ready = 1'b0;	// a frame's worth since the last frame
	reg  [TW-1:0] p_records = 0, p_lost = 0; // its STATUS counters
	wire          pat = i_src != 2'd0;
	wire          pat_run = d_on && pat && !d_stop;
	// records sampled since the last frame (none when a bus capture left
	// its index ahead of the pattern's)
	wire [TW:0]   p_since = {1'b0, p_clk} - {1'b0, d_e};
	wire [47:0]   p_rec;
	wire          p_load, p_step;

	bach_pattern pattern (.i_clk(i_clk), .i_start(i_start),
		.i_lfsr(i_src == 2'd2), .i_free_step(pat_run && p_lagging),
		.i_load(p_load),
		.i_step(p_step), .o_rec(p_rec));

	// STATUS values that move, taken when a STATUS frame starts
	reg  [AW:0]   s_fill = 0;
	reg  [TW-1:0] s_records = 0, s_lost = 0;
	reg  [31:0]   s_hz = 32'd0;

	// the record FIFO: entry `ent` is being sent, `u_ra` is read ahead
	reg  [AW:0]   u_ra = 0;
	reg  [63:0]   ent = 64'd0;
	assign o_raddr = u_ra[AW-1:0];
	assign o_free = d_fp;
	assign o_braddr = u_brp[BAW-1:0];
	assign o_bfree = u_brp;

	// ---- the next data frame: S_EV1 to S_DEC ----------------------------
	reg           e_bv = 1'b0;	// a boundary waits
	reg  [AW:0]   e_wptr = 0;
	// the boundary at the head: the RAM keeps reading it while u_brp
	// stays, and the writer leaves it alone until it is freed
	wire          e_bend = i_bdata[BW-1];	// it is the END
	wire [AW:0]   e_bpos = i_bdata[BW-2 -: AW + 1];
	wire [TW-1:0] e_blost = i_bdata[2 * TW - 1 -: TW];
	wire [TW-1:0] e_bts = i_bdata[TW-1:0];
	reg  [AW:0]   e_avail = 0;	// records in the FIFO
	reg  [AW:0]   e_bdist = 0;	// records before the boundary
	reg  [TW-1:0] e_index = 0;	// index of the next record
	reg  [TW-1:0] e_index_big = 0;	// that of an empty frame of 2^32 - 1
	reg           e_bigloss = 1'b0;	// d_lost needs an empty frame first
	reg           f_bz = 1'b0;	// the boundary is at the head
	reg           f_b_le_a = 1'b0;	// all records up to it are here
	reg           f_b_le_max = 1'b0; // a frame can reach it
	reg           f_a_ge_max = 1'b0; // a full frame is here
	reg           f_az = 1'b0;	// no record is here
	reg  [AW:0]   e_n = 0;		// records in the frame to send
	reg  [TW-1:0] e_plost = 0;	// pattern: lost before the frame
	reg  [TW-1:0] e_pts = 0;	// its timestamp
	reg           e_final = 1'b0;	// it is the last
	wire          e_pbig = e_plost > LOST_MAX;

	wire          take_rq = u_st == S_IDLE && i_rq && !o_rq_done;
	// the pattern: a frame is placed once there are records for it
	wire          place = u_st == S_IDLE && !take_rq && d_on && pat &&
			      !d_pat && (p_ready || !i_drop || d_stop);
	// the decision of S_DEC, on the registers of S_EV3
	wire          to_b = e_bv && f_b_le_a && f_b_le_max && !f_bz;
	wire          close = to_b || f_a_ge_max ||
			      (!f_az && (d_aged || i_holding ||
					 (d_stop && !i_bus_alive)));
	wire          absorb = u_st == S_DEC && !pat && !d_end && e_bv && f_bz;
	wire [AW:0]   n_bus = to_b ? e_bdist : f_a_ge_max ? FMAX : e_avail;

	// the pattern cursor: to the free generator's index when a frame is
	// placed (drop), a step for each record sent
	assign p_load = place && i_drop;

	// ---- the byte of this clock -----------------------------------------
	wire [319:0]  hdr = {h_d, h_c, {(64 - TW){1'b0}}, h_b,
			     {(64 - TW){1'b0}}, h_a, h_plen, h_seq, 8'd40,
			     h_flags, h_type, 8'd1, 8'h48, 8'h43, 8'h41, 8'h42};
	// (the pattern never holds the CPU: no stalls to report, whatever
	// the bus side counted in an earlier capture)
	wire [TW-1:0] st_stalled = pat ? {TW{1'b0}} : i_st_stalled;
	wire [31:0]   st_episodes = pat ? 32'd0 : i_st_episodes;
	wire [TW-1:0] st_offbus = pat ? {TW{1'b0}} : i_st_offbus;
	wire [447:0]  stat = {{(64 - TW){1'b0}}, st_offbus,
			      64'd0, {(64 - TW){1'b0}}, st_stalled, s_hz,
			      st_episodes, {(64 - TW){1'b0}}, s_lost,
			      {(64 - TW){1'b0}}, s_records, 32'd1 << AW,
			      {(31 - AW){1'b0}}, s_fill};
	wire [47:0]   rec = pat ? p_rec : ent[63:16];
	wire [15:0]   delta = u_ri == 16'd0 ? 16'd0 : pat ? 16'd1 : ent[15:0];
	wire [31:0]   crc_next;
	reg  [7:0]    byte_now;

	always @* begin
		case (u_st)
		S_HDR:   byte_now = hdr[8 * u_k[5:0] +: 8];
		S_STAT:  byte_now = stat[8 * u_k[5:0] +: 8];
		S_IDENT: byte_now = IDENT[8 * u_k[5:0] +: 8];
		S_DELTA: byte_now = u_kb[0] ? delta[15:8] : delta[7:0];
		S_REC:   byte_now = rec[47 - 8 * u_kb -: 8];
		default: byte_now = u_crc_out[8 * u_k[1:0] +: 8];
		endcase
	end

	// the stage where bytes are counted in the CRC
	bach_crc32_8 crc8 (.i_crc(u_first_byte ? 32'hffffffff : u_crc),
			   .i_byte(o_byte), .o_crc(crc_next));

	always @(posedge i_clk)
		if (o_valid)
			u_crc <= crc_next;

	// states that send a byte this clock, when there is room
	wire sending = u_st == S_HDR || u_st == S_STAT || u_st == S_IDENT ||
		       u_st == S_DELTA || u_st == S_REC || u_st == S_CRC;
	wire go = sending && i_room;

	always @(posedge i_clk) begin
		o_valid <= go;
		if (go) begin
			o_byte <= byte_now;
			u_first_byte <= u_st == S_HDR && u_k == 7'd0;
		end
	end

	assign p_step = u_st == S_REC && go && u_kb == 3'd5 && pat;

	// ---- the frame state machine ----------------------------------------
	// One always block per register group below, each with what its
	// registers hold. The wires here name the events they share.

	// the states that move on a byte: the last byte of each part
	wire hdr_end = u_st == S_HDR && go && u_k == 7'd39;
	wire stat_end = u_st == S_STAT && go && u_k == 7'd55;
	wire ident_end = u_st == S_IDENT && go && u_k == 7'd63;
	wire delta_end = u_st == S_DELTA && go && u_kb == 3'd1;	// of a delta
	wire rec_end = u_st == S_REC && go && u_kb == 3'd5;	// of a record
	wire last_delta = delta_end && u_ri == h_c[15:0] - 16'd1;
	wire last_rec = rec_end && u_ri == h_c[15:0] - 16'd1;
	wire done = u_st == S_DONE;
	wire data_done = done && h_type == T_DATA;

	// the decision of S_DEC, one wire per branch, in priority order
	wire in_dec = u_st == S_DEC;
	wire dec_pbig = in_dec && pat && e_pbig;	// pattern: 2^32 lost first
	wire dec_pat = in_dec && pat && !e_pbig;	// pattern: a frame
	wire dec_rest = in_dec && !pat && !absorb;
	wire dec_big = dec_rest && e_bigloss;		// bus: 2^32 lost first
	wire dec_end = dec_rest && !e_bigloss && d_end;	// the last, empty
	wire dec_close = dec_rest && !e_bigloss && !d_end && close;
	// no bus clock: no END will come
	wire dec_noclk = dec_rest && !e_bigloss && !d_end && !close &&
			 d_stop && !i_bus_alive && f_az && !e_bv;

	// A data frame of n records, `lost` before it, the first at `index`,
	// at time `ts`, is planned in S_DEC (empty ones and the pattern's) or
	// in S_PLAN (the bus's, once the head record is read): S_HEAD works
	// out the rest of its header.
	wire plan = dec_pbig || dec_pat || dec_big || dec_end || u_st == S_PLAN;
	reg  [15:0]   pl_n;
	reg  [TW-1:0] pl_lost, pl_index, pl_ts;
	reg           pl_last;

	always @* begin
		pl_n = 16'd0;
		pl_lost = d_lost;
		pl_index = e_index;
		pl_ts = 0;
		pl_last = 1'b0;
		if (dec_pbig) begin
			pl_lost = LOST_MAX;
			pl_index = e_index_big;
			pl_ts = e_pts;
		end else if (dec_pat) begin
			pl_n = e_final ? 16'd0 : PAT_N;
			pl_lost = e_plost;
			pl_ts = e_pts;
			pl_last = e_final;
		end else if (dec_big) begin
			pl_lost = LOST_MAX;
			pl_index = e_index_big;
			pl_ts = d_ts;
		end else if (dec_end) begin
			pl_ts = d_tsv ? d_tsa : d_ts;
			pl_last = 1'b1;
		end else begin
			// S_PLAN
			pl_n = {{(15 - AW){1'b0}}, e_n};
			pl_last = h_last;
		end
	end

	// the first record's time (ent holds it from S_PLAN): from a
	// boundary, or the last one's plus its delta
	wire [TW-1:0] ts_first = d_tsv ? d_tsa :
				 d_ts + {{(TW - 16){1'b0}}, ent[15:0]};

	// u_st: what is being built
	always @(posedge i_clk)
		if (i_rst)
			u_st <= S_IDLE;
		else case (u_st)
		S_IDLE:
			if (take_rq)
				u_st <= S_HDR;
			else if (!place && d_on && (!pat || d_pat))
				u_st <= S_EV1;
		S_EV1:   u_st <= S_EV2;
		S_EV2:   u_st <= S_EV3;
		S_EV3:   u_st <= S_DEC;
		S_DEC:   u_st <= plan ? S_HEAD : dec_close ? S_PLANW : S_IDLE;
		S_PLANW: u_st <= S_PLAN;
		S_PLAN:  u_st <= S_HEAD;
		S_HEAD:  u_st <= S_HDR;
		S_HDR:
			if (hdr_end)
				u_st <= h_type == T_STATUS ? S_STAT :
					h_type == T_IDENTITY ? S_IDENT :
					h_type != T_DATA || h_c == 0 ? S_CRCW :
					i_timing ? S_DELTA : S_REC;
		S_STAT:  if (stat_end) u_st <= S_CRCW;
		S_IDENT: if (ident_end) u_st <= S_CRCW;
		S_DELTA: if (last_delta) u_st <= S_PREW;
		S_PREW:  u_st <= S_PRE;
		S_PRE:   u_st <= S_REC;
		S_REC:   if (last_rec) u_st <= S_CRCW;
		S_CRCW:  u_st <= S_CRC;
		S_CRC:   if (go && u_k == 7'd3) u_st <= S_DONE;
		default: u_st <= S_IDLE;	// S_DONE
		endcase

	// u_k: the byte within the header, the STATUS or IDENTITY payload,
	// or the CRC
	always @(posedge i_clk)
		if (take_rq || u_st == S_HEAD || u_st == S_CRCW || hdr_end ||
		    stat_end || ident_end)
			u_k <= 7'd0;
		else if (go && (u_st == S_HDR || u_st == S_STAT ||
				u_st == S_IDENT || u_st == S_CRC))
			u_k <= u_k + 7'd1;

	// u_kb: the byte within a delta or a record
	always @(posedge i_clk)
		if (u_st == S_HEAD || delta_end || rec_end)
			u_kb <= 3'd0;
		else if (go && (u_st == S_DELTA || u_st == S_REC))
			u_kb <= u_kb + 3'd1;

	// u_ri: the record (or delta) within the frame
	always @(posedge i_clk)
		if (u_st == S_HEAD || last_delta)
			u_ri <= 16'd0;
		else if (delta_end || rec_end)
			u_ri <= u_ri + 16'd1;

	// u_ra: the record FIFO address read ahead; ent: the entry being sent
	always @(posedge i_clk)
		if (dec_close || last_delta)
			u_ra <= d_fp;
		else if (u_st == S_PLAN || u_st == S_PRE || delta_end ||
			 rec_end)
			u_ra <= u_ra + 1'b1;

	always @(posedge i_clk)
		if (u_st == S_PLAN || u_st == S_PRE || delta_end || rec_end)
			ent <= i_rdata;

	// u_crc_out: the frame's CRC, as sent
	always @(posedge i_clk)
		if (u_st == S_CRCW)
			u_crc_out <= ~crc_next;

	// h_type, h_a, h_b, h_c, h_lost, h_last, h_bus: the frame as planned
	// (a reply in S_IDLE, a data frame by `plan`), B once S_HEAD has the
	// first record's time
	always @(posedge i_clk)
		if (take_rq) begin
			h_type <= i_rq_type;
			h_a <= 0;
			h_b <= 0;
			h_c <= i_rq_type == T_STATUS ? 32'd0 : i_rq_cmd;
			h_last <= 1'b0;
		end else if (plan) begin
			h_type <= T_DATA;
			h_a <= pl_index;
			h_b <= pl_ts;
			h_c <= {16'd0, pl_n};
			h_lost <= pl_lost;
			h_last <= pl_last;
			h_bus <= u_st == S_PLAN;
		end else if (dec_close) begin
			h_last <= to_b && e_bend && e_blost == 0;
		end else if (u_st == S_HEAD && h_bus) begin
			h_b <= ts_first;
		end

	// h_pop_end: the END boundary goes out with this data frame
	always @(posedge i_clk)
		if (take_rq || in_dec)
			h_pop_end <= dec_close && to_b && e_bend && e_blost == 0;

	// h_flags, h_seq, h_plen, h_d: the rest of the header, for a reply
	// when it is taken, for a data frame in S_HEAD
	always @(posedge i_clk)
		if (take_rq) begin
			h_flags <= 8'd0;
			h_d <= i_rq_type == T_STATUS ? 32'd0 : i_rq_result;
			case (i_rq_type)
			T_STATUS: begin
				h_seq <= u_seq_status;
				h_plen <= 32'd56;
			end
			T_IDENTITY: begin
				h_seq <= u_seq_ident;
				h_plen <= 32'd64;
			end
			default: begin
				h_seq <= u_seq_ack;
				h_plen <= 32'd0;
			end
			endcase
		end else if (u_st == S_HEAD) begin
			h_flags <= (d_first ? F_FIRST : 8'd0) |
				   (h_last ? F_LAST : 8'd0) |
				   (h_lost != 0 ? F_OVERFLOW : 8'd0) |
				   (i_timing ? F_TIMING : 8'd0);
			h_seq <= u_seq_data;
			h_plen <= i_timing ? {h_c[28:0], 3'd0} :
					     {h_c[29:0], 2'd0} + {h_c[30:0], 1'd0};
			h_d <= h_lost[31:0];
		end

	// s_fill, s_records, s_lost, s_hz: the STATUS values that move,
	// taken when a reply starts
	always @(posedge i_clk)
		if (take_rq) begin
			s_fill <= pat ? 0 : i_wptr - d_fp;
			s_records <= pat ? p_records : i_st_records;
			s_lost <= pat ? p_lost : i_st_lost;
			s_hz <= i_st_hz;
		end

	// sequence numbers, per frame type: counted when a frame is out
	always @(posedge i_clk)
		if (i_start)
			u_seq_data <= 32'd0;
		else if (data_done)
			u_seq_data <= u_seq_data + 32'd1;

	always @(posedge i_clk)
		if (done && h_type == T_STATUS)
			u_seq_status <= u_seq_status + 32'd1;

	always @(posedge i_clk)
		if (done && h_type == T_IDENTITY)
			u_seq_ident <= u_seq_ident + 32'd1;

	always @(posedge i_clk)
		if (done && h_type != T_DATA && h_type != T_STATUS &&
		    h_type != T_IDENTITY)
			u_seq_ack <= u_seq_ack + 32'd1;

	// o_rq_done: a reply is out (pulse); o_last_sent: the LAST data frame
	// is out (pulse)
	always @(posedge i_clk) begin
		o_rq_done <= done && h_type != T_DATA;
		o_last_sent <= data_done && h_last;
	end

	// d_on: data frames are due, from START until the LAST is out
	always @(posedge i_clk)
		if (i_rst)
			d_on <= 1'b0;
		else if (i_start)
			d_on <= 1'b1;
		else if (data_done && h_last)
			d_on <= 1'b0;

	// d_stop: STOP was asked in this capture
	always @(posedge i_clk)
		if (i_stop)
			d_stop <= 1'b1;
		else if (i_start)
			d_stop <= 1'b0;

	// d_first: the next data frame is the FIRST
	always @(posedge i_clk)
		if (i_start)
			d_first <= 1'b1;
		else if (data_done)
			d_first <= 1'b0;

	// d_e: the index of the next record, once a frame's header is set
	always @(posedge i_clk)
		if (i_start)
			d_e <= 0;
		else if (u_st == S_HEAD)
			d_e <= h_a + {{(TW - 16){1'b0}}, h_c[15:0]};

	// d_ts: the timestamp of the last record sent (the bus)
	always @(posedge i_clk)
		if (i_start)
			d_ts <= 0;
		else if (u_st == S_HEAD && h_bus)
			d_ts <= ts_first;
		else if (rec_end && !pat && u_ri != 16'd0)
			d_ts <= d_ts + {{(TW - 16){1'b0}}, ent[15:0]};

	// d_lost: the bus records lost before the next record, not yet sent
	always @(posedge i_clk)
		if (i_start)
			d_lost <= 0;
		else if (absorb)
			d_lost <= d_lost + e_blost;
		else if (u_st == S_HEAD && !pat)
			d_lost <= d_lost - h_lost;

	// d_tsv, d_tsa: the next record's timestamp, from a boundary (the
	// bus); the index a test-pattern frame was placed at
	always @(posedge i_clk)
		if (i_start)
			d_tsv <= 1'b0;
		else if (absorb)
			d_tsv <= 1'b1;
		else if (u_st == S_HEAD)
			d_tsv <= 1'b0;

	always @(posedge i_clk)
		if (place)
			d_tsa <= i_drop && !d_stop ? p_lag : p_clk;
		else if (absorb)
			d_tsa <= e_bts;

	// d_end: the END boundary is taken in (or no bus clock will send it)
	always @(posedge i_clk)
		if (i_start)
			d_end <= 1'b0;
		else if (absorb)
			d_end <= e_bend;
		else if (dec_noclk)
			d_end <= 1'b1;

	// d_pat: the next test-pattern frame is placed
	always @(posedge i_clk)
		if (i_start || data_done)
			d_pat <= 1'b0;
		else if (place)
			d_pat <= 1'b1;

	// d_fp: the record FIFO position of the next record to send; entries
	// before it are free
	always @(posedge i_clk)
		if (rec_end && !pat)
			d_fp <= d_fp + 1'b1;

	// u_brp: the head of the boundary FIFO; a boundary is freed when it
	// is taken in, or when the frame it ends is out
	always @(posedge i_clk)
		if (absorb || (data_done && h_pop_end))
			u_brp <= u_brp + 1'b1;

	// d_has, d_age, d_aged: a record waits in the FIFO, for how many
	// clocks (the 1 ms rule)
	always @(posedge i_clk)
		d_has <= i_wptr != d_fp;

	always @(posedge i_clk)
		if (u_st == S_PLAN || !d_has) begin
			d_age <= 17'd0;
			d_aged <= 1'b0;
		end else begin
			if (d_age != 17'h1ffff)
				d_age <= d_age + 17'd1;
			d_aged <= d_age >= AGE_MAX;
		end

	// S_EV1 to S_EV3: the next data frame worked out, a stage a clock
	// (e_wptr, e_bv: the heads of both FIFOs, settled since the last pop)
	always @(posedge i_clk)
		if (u_st == S_EV1) begin
			e_wptr <= i_wptr;
			e_bv <= i_bwptr != u_brp;
		end

	always @(posedge i_clk)
		if (u_st == S_EV2) begin
			e_avail <= e_wptr - d_fp;
			e_bdist <= e_bpos - d_fp;
			// the pattern: its last frame counts all sampled
			// until STOP
			e_index <= !pat ? d_e + d_lost :
				   !i_drop ? d_e : d_stop ? p_clk : d_tsa;
			e_pts <= d_stop ? p_clk : d_tsa;
			e_final <= d_stop;
			e_index_big <= d_e + LOST_MAX;
			e_bigloss <= d_lost > LOST_MAX;
		end

	always @(posedge i_clk)
		if (u_st == S_EV3) begin
			f_bz <= e_bdist == 0;
			f_b_le_a <= e_bdist <= e_avail;
			f_b_le_max <= e_bdist <= FMAX;
			f_a_ge_max <= e_avail >= FMAX;
			f_az <= e_avail == 0;
			e_plost <= e_index - d_e;
		end

	// e_n: the records in the bus frame to send
	always @(posedge i_clk)
		if (dec_close)
			e_n <= n_bus;

	// p_clk, p_lag, p_lagging: the pattern's index reached, and the free
	// generator's, PAT_FRAME behind it (USB clock: one index a clock)
	always @(posedge i_clk)
		if (i_start) begin
			p_clk <= 0;
			p_lag <= 0;
			p_lagging <= 1'b0;
		end else if (pat_run) begin
			p_clk <= p_clk + 1'b1;
			if (p_clk == PAT_FRAME - 1)
				p_lagging <= 1'b1;
			if (p_lagging)
				p_lag <= p_lag + 1'b1;
		end

	// p_ready: a frame's worth of pattern records since the last frame
	always @(posedge i_clk)
		p_ready <= !p_since[TW] && p_since[TW-1:0] >= PAT_FRAME &&
			   !i_start;

	// p_records, p_lost: the pattern's STATUS counters (with drop a
	// record a clock, with stall each one sent; the losses as frames
	// report them)
	always @(posedge i_clk)
		if (i_start || i_zero)
			p_records <= 0;
		else if ((pat_run && i_drop) || (p_step && !i_drop))
			p_records <= p_records + 1'b1;

	always @(posedge i_clk)
		if (i_start)
			p_lost <= 0;
		else if (u_st == S_HEAD && pat)
			p_lost <= p_lost + h_lost;
		else if (i_zero)
			p_lost <= 0;

`ifdef FORMAL
	// ---- properties (make fpga-formal: fpga/bench/formal/framer.ys) -----
	//
	// Data frames of the bus (the test patterns are checked bit-exact by
	// the simulation). The environment: the record FIFO never holds more
	// than it can, its write pointer only moves on; the configuration
	// stays while a capture runs (CONFIGURE is refused then).
	localparam [AW:0] F_SIZE = 1 << AW;
	localparam [BAW:0] F_BSIZE = 1 << BAW;
	reg f_past = 1'b0;

	always @(posedge i_clk)
		f_past <= 1'b1;

	always @* begin
		assume(i_src == 2'd0);
		// bach_ctrl asks for STATUS, IDENTITY and ACK only
		if (i_rq)
			assume(i_rq_type == T_STATUS ||
			       i_rq_type == T_IDENTITY || i_rq_type == 8'd4);
		assume(i_wptr - d_fp <= F_SIZE);
		assume(i_bwptr - u_brp <= F_BSIZE);
	end

	reg [AW:0] f_wptr = 0;
	reg f_timing = 1'b0, f_on = 1'b0;

	always @(posedge i_clk) begin
		f_wptr <= i_wptr;
		f_timing <= i_timing;
		f_on <= d_on;
	end

	always @*
		if (f_past) begin
			assume(i_wptr - f_wptr <= F_SIZE);
			if (u_st != S_IDLE || d_on || f_on)
				assume(i_timing == f_timing);
		end

	// f_pay: payload bytes sent in this frame; f_fp: the FIFO position
	// of its first record
	reg [31:0] f_pay = 32'd0;
	reg [AW:0] f_fp = 0;

	always @(posedge i_clk)
		if (take_rq || u_st == S_HEAD)
			f_pay <= 32'd0;
		else if (go && (u_st == S_STAT || u_st == S_IDENT ||
				u_st == S_DELTA || u_st == S_REC))
			f_pay <= f_pay + 32'd1;

	always @(posedge i_clk)
		if (u_st == S_HEAD)
			f_fp <= d_fp;

	// the losses the boundaries brought in, and those frames reported
	reg [TW-1:0] f_lost_in = 0, f_lost_out = 0;

	always @(posedge i_clk)
		if (i_start) begin
			f_lost_in <= 0;
			f_lost_out <= 0;
		end else begin
			if (absorb)
				f_lost_in <= f_lost_in + e_blost;
			if (u_st == S_HEAD)
				f_lost_out <= f_lost_out + h_lost;
		end

	wire [31:0] f_dlen = {h_c[30:0], 1'b0};	// the deltas' bytes
	wire [31:0] f_rlen = {h_c[29:0], 2'b00} + {h_c[30:0], 1'b0};
	wire [31:0] f_ri = {16'd0, u_ri};
	wire f_data = h_type == T_DATA;

	always @* begin
		// a payload's length matches its header: 6 or 8 bytes a
		// record for data, 56 for STATUS, 64 for IDENTITY, 0 for ACK
		if (u_st == S_HDR || u_st == S_STAT || u_st == S_IDENT ||
		    u_st == S_DELTA || u_st == S_PREW || u_st == S_PRE ||
		    u_st == S_REC || u_st == S_CRCW)
			assert(h_plen == (f_data ? (i_timing ? f_dlen : 32'd0) +
					  f_rlen :
					  h_type == T_STATUS ? 32'd56 :
					  h_type == T_IDENTITY ? 32'd64 :
					  32'd0));
		// and the frame sends that many payload bytes, no more
		if (u_st == S_HDR)
			assert(f_pay == 32'd0 && u_k <= 7'd39 && (!f_data ||
			       (u_ri == 16'd0 && u_kb == 3'd0)));
		if (u_st == S_STAT)
			assert(h_type == T_STATUS && f_pay == {25'd0, u_k} &&
			       u_k <= 7'd55);
		if (u_st == S_IDENT)
			assert(h_type == T_IDENTITY &&
			       f_pay == {25'd0, u_k} && u_k <= 7'd63);
		if (u_st == S_DELTA)
			assert(f_data && i_timing && u_kb <= 3'd1 &&
			       f_ri < h_c &&
			       f_pay == {f_ri[30:0], 1'b0} + {29'd0, u_kb});
		if (u_st == S_PREW || u_st == S_PRE)
			assert(f_data && i_timing && h_c != 0 &&
			       f_pay == f_dlen && u_ri == 16'd0 && u_kb == 3'd0);
		if (u_st == S_REC)
			assert(f_data && u_kb <= 3'd5 && f_ri < h_c &&
			       f_pay == (i_timing ? f_dlen : 32'd0) +
					{f_ri[29:0], 2'b00} +
					{f_ri[30:0], 1'b0} + {29'd0, u_kb});
		if (u_st == S_CRCW)
			assert(f_pay == h_plen);
		// a data frame of the bus holds at most FRAME_MAX records
		if (f_data && (u_st == S_HEAD || u_st == S_HDR ||
			       u_st == S_DELTA || u_st == S_PREW ||
			       u_st == S_PRE || u_st == S_REC))
			assert(h_c <= FRAME_MAX);
		if (u_st == S_PLANW || u_st == S_PLAN)
			assert(e_n <= FMAX);
		// (for the induction: S_DEC decides on what S_EV3 found)
		if (u_st == S_DEC)
			assert(f_bz == (e_bdist == 0) &&
			       f_b_le_a == (e_bdist <= e_avail) &&
			       f_b_le_max == (e_bdist <= FMAX) &&
			       f_a_ge_max == (e_avail >= FMAX) &&
			       f_az == (e_avail == 0));
		// its records are the FIFO entries it frees, one each
		if (f_data && (u_st == S_HDR || u_st == S_DELTA ||
			       u_st == S_PREW || u_st == S_PRE))
			assert(d_fp == f_fp);
		if (f_data && u_st == S_REC)
			assert(d_fp - f_fp == u_ri[AW:0] && f_ri <= h_c);
		if (f_data && (u_st == S_CRCW || u_st == S_CRC ||
			       u_st == S_DONE))
			assert(d_fp - f_fp == h_c[AW:0]);
		// every record lost is reported once: in a frame, or still
		// to be
		assert(f_lost_in == f_lost_out + d_lost);
	end

	// ---- covers (make fpga-formal runs them: each must be reached) -----
	// A frame of each kind under way, its header going out (the first
	// byte on o_byte): ACK, STATUS, IDENTITY, a data frame of bus records
	// with deltas and one without, and a data frame that reports lost
	// records (OVERFLOW). A whole frame is 44 bytes deep at least (the
	// 40-byte header and the CRC), too deep for a quick cover: the
	// assertions on u_k and f_pay hold it byte by byte, and the
	// simulation (check_stream) reads every kind whole.
	reg f_hdr_go = 1'b0;	// the header's first byte went out last clock

	always @(posedge i_clk)
		f_hdr_go <= go && u_st == S_HDR && u_k == 7'd0;

	always @* begin
		cover(f_hdr_go && o_valid && h_type == 8'd4);
		cover(f_hdr_go && o_valid && h_type == T_STATUS);
		cover(f_hdr_go && o_valid && h_type == T_IDENTITY);
		cover(f_hdr_go && o_valid && f_data && h_c != 0 && i_timing);
		cover(f_hdr_go && o_valid && f_data && h_c != 0 && !i_timing);
		cover(u_st == S_HDR && f_data && h_lost != 0);
	end
`endif
endmodule
