`default_nettype none
// bach_cmd: reads command frames from the host's byte stream with the
// rules the host applies to its own (docs/board-protocol.md sections 6
// and 7): find the magic; check the version, the header length and a
// payload length of at most 524280 bytes, else skip one byte past the
// magic and search again; once the frame is in, check the CRC, else skip
// the four magic bytes and search again. A good frame of another type is
// skipped whole; a good COMMAND frame becomes o_cmd (the command word at
// offset 32) with the first 16 bytes of its payload (CONFIGURE), held
// until bach_ctrl takes it.
//
// To search again inside bytes already looked at, the bytes since the
// start of the current candidate frame stay in a ring of RING bytes (block
// RAM). The USB adapter reads from the host only while the ring has room
// (o_ready). A frame longer than the ring (no command is; a later minor
// version could append to a payload) cannot be kept whole: its start is
// let go as the ring fills, and a search after its failure resumes from
// the oldest byte still kept, or right after the magic if that is still
// kept (never further: the bytes after it may hold a command).
module bach_cmd #(
	parameter RW = 9		// ring: 2^RW bytes
) (
	input  wire         i_clk,
	input  wire         i_rst,
	input  wire         i_valid,	// a byte from the host
	input  wire [7:0]   i_byte,
	output wire         o_ready,	// room for a few more

	output reg          o_cmd_valid = 1'b0,
	output reg  [31:0]  o_cmd = 32'd0,
	output reg  [127:0] o_cfg = 128'd0,	// payload bytes 0..15, 0 low
	output reg          o_cfg_ok = 1'b0,	// the payload had 16 bytes
	input  wire         i_take
);
	localparam [31:0] CRC_MAGIC = 32'h3dad82c6; // CRC register after it
	localparam [19:0] PLEN_MAX = 20'd524280;
	localparam [7:0] T_COMMAND = 8'd16;
	localparam [RW:0] ROOM = (1 << RW) - 8;	// keep 8 for bytes in flight
	localparam [RW:0] FOUR = 4;

	// the ring: bytes [u_fs, u_w) kept, u_r the next to look at
	reg  [7:0]  mem [0:(1 << RW) - 1];
	reg  [RW:0] u_w = 0, u_r = 0, u_fs = 0;
	reg  [7:0]  u_b;		// mem[u_r] as read at the last edge
	reg         u_bv = 1'b0;	// it was there, and u_r has not moved

	always @(posedge i_clk)
		if (i_valid)
			mem[u_w[RW-1:0]] <= i_byte;

	assign o_ready = u_w - u_fs < ROOM;

	// the parser
	localparam [1:0] P_MAGIC = 2'd0, P_HDR = 2'd1, P_PAY = 2'd2,
			 P_CRC = 2'd3;
	reg  [1:0]  u_st = P_MAGIC;
	reg  [5:0]  u_pos = 6'd0;	// bytes of the frame seen (to 40)
	reg  [19:0] u_left = 20'd0;	// payload bytes still to come
	reg  [1:0]  u_crcb = 2'd0;	// CRC bytes seen
	reg  [31:0] u_crc = 32'd0;
	reg  [7:0]  u_type = 8'd0;
	reg  [31:0] u_plen = 32'd0, u_c = 32'd0;
	reg         u_plen_big = 1'b0;	// u_plen > PLEN_MAX (a clock late)
	reg  [127:0] u_pay = 128'd0;
	reg  [4:0]  u_npay = 5'd0;	// payload bytes kept (up to 16)
	reg  [2:0]  u_lg = 3'd0;	// magic bytes let go (a long frame)
	wire [31:0] crc_next;
	wire [7:0]  crc_byte = ~u_crc[8 * u_crcb +: 8];

	bach_crc32_8 crc8 (.i_crc(u_crc), .i_byte(u_b), .o_crc(crc_next));

	// a byte to look at this clock (none while a command waits: the ring
	// fills and the host is read no more)
	wire        take = u_bv && !o_cmd_valid;
	// magic bytes in order: where in "BACH" this byte would be
	wire [7:0]  magic_at = u_pos == 6'd0 ? 8'h42 : u_pos == 6'd1 ? 8'h41 :
			       u_pos == 6'd2 ? 8'h43 : 8'h48;

	always @(posedge i_clk) begin
		u_b <= mem[u_r[RW-1:0]];
		u_bv <= u_r != u_w && !take;
		u_plen_big <= u_plen > {12'd0, PLEN_MAX};
		if (i_valid)
			u_w <= u_w + 1'b1;
		if (i_take)
			o_cmd_valid <= 1'b0;

		if (i_rst) begin
			u_st <= P_MAGIC;
			u_pos <= 6'd0;
			u_r <= u_w;
			u_fs <= u_w;
			u_bv <= 1'b0;
		end else if (take) begin
			// a byte every other clock: u_r moves, the RAM reads
			// the next at the next edge
			u_r <= u_r + 1'b1;
			case (u_st)
			P_MAGIC:
				if (u_b != magic_at) begin
					// not the magic: the next byte starts
					// the search; a B may start it again
					u_pos <= 6'd0;
					if (u_pos != 6'd0) begin
						u_r <= u_fs + 1'b1;
						u_fs <= u_fs + 1'b1;
					end else begin
						u_fs <= u_r + 1'b1;
					end
				end else if (u_pos == 6'd3) begin
					u_st <= P_HDR;
					u_lg <= 3'd0;
					u_pos <= 6'd4;
					u_crc <= CRC_MAGIC;
					u_pay <= 128'd0;
					u_npay <= 5'd0;
					u_crcb <= 2'd0;
				end else begin
					u_pos <= u_pos + 6'd1;
				end
			P_HDR: begin
				u_crc <= crc_next;
				u_pos <= u_pos + 6'd1;
				case (u_pos)
				6'd5: u_type <= u_b;
				6'd12: u_plen[7:0] <= u_b;
				6'd13: u_plen[15:8] <= u_b;
				6'd14: u_plen[23:16] <= u_b;
				6'd15: u_plen[31:24] <= u_b;
				6'd32: u_c[7:0] <= u_b;
				6'd33: u_c[15:8] <= u_b;
				6'd34: u_c[23:16] <= u_b;
				6'd35: u_c[31:24] <= u_b;
				default: ;
				endcase
				if ((u_pos == 6'd4 && u_b != 8'd1) ||
				    (u_pos == 6'd7 && u_b != 8'd40) ||
				    (u_pos == 6'd16 && u_plen_big)) begin
					// an impossible header: one byte on
					u_st <= P_MAGIC;
					u_pos <= 6'd0;
					u_r <= u_fs + 1'b1;
					u_fs <= u_fs + 1'b1;
				end else if (u_pos == 6'd39) begin
					u_left <= u_plen[19:0];
					u_st <= u_plen == 0 ? P_CRC : P_PAY;
				end
			end
			P_PAY: begin
				u_crc <= crc_next;
				u_left <= u_left - 20'd1;
				if (u_npay != 5'd16) begin
					u_pay[8 * u_npay[3:0] +: 8] <= u_b;
					u_npay <= u_npay + 5'd1;
				end
				if (u_left == 20'd1)
					u_st <= P_CRC;
			end
			default: begin
				// P_CRC, little-endian
				u_crcb <= u_crcb + 2'd1;
				if (u_b != crc_byte) begin
					// a bad CRC: past the magic (what of
					// it is still kept)
					u_st <= P_MAGIC;
					u_pos <= 6'd0;
					u_r <= u_fs + FOUR - {{(RW - 2){1'b0}}, u_lg};
					u_fs <= u_fs + FOUR - {{(RW - 2){1'b0}}, u_lg};
				end else if (u_crcb == 2'd3) begin
					// a good frame, whole: past it
					u_st <= P_MAGIC;
					u_pos <= 6'd0;
					u_fs <= u_r + 1'b1;
					if (u_type == T_COMMAND && !o_cmd_valid) begin
						o_cmd_valid <= 1'b1;
						o_cmd <= u_c;
						o_cfg <= u_pay;
						o_cfg_ok <= u_npay == 5'd16;
					end
				end
			end
			endcase
		end else if (u_st == P_PAY && u_w - u_fs >= ROOM && u_fs != u_r) begin
			// a frame longer than the ring: let its start go
			u_fs <= u_fs + 1'b1;
			if (u_lg != 3'd4)
				u_lg <= u_lg + 3'd1;
		end
	end

`ifdef FORMAL
	// ---- properties (make fpga-formal: fpga/bench/formal/cmd.ys) -------
	//
	// No command lost behind garbage: the start of the candidate frame,
	// u_fs, only moves on by what the host's rules (board-protocol
	// section 7) let go: one byte after a byte that is not the magic or
	// a header that cannot be, the four magic bytes after a bad CRC (no
	// frame starts inside "BACH"), a good frame whole, or, for a frame
	// longer than the ring, its oldest byte. Every byte between the
	// candidate's start and the parser is looked at again after a
	// failure. The environment: bytes come while o_ready says there is
	// room, and the reset is at power-on only.
	reg f_past = 1'b0;

	always @(posedge i_clk)
		f_past <= 1'b1;

	always @* begin
		assume(!i_rst);
		if (!o_ready)
			assume(!i_valid);
	end

	// the bytes since the candidate's start are in the ring, the ones
	// looked at among them, and the ring holds no more than it can
	always @* begin
		assert(u_r - u_fs <= u_w - u_fs);
		assert(u_w - u_fs <= ROOM + 1'b1);
		if (u_st == P_MAGIC)
			assert(u_r - u_fs == {{(RW - 5){1'b0}}, u_pos} &&
			       u_pos <= 6'd3);
		else if (u_st == P_HDR)
			assert(u_r - u_fs == {{(RW - 5){1'b0}}, u_pos} &&
			       u_pos >= 6'd4 && u_pos <= 6'd39 && u_lg == 3'd0);
		else
			assert(u_pos == 6'd40 && u_lg <= 3'd4 &&
			       (u_lg == 3'd4 || {1'b0, u_r - u_fs} +
				{{(RW - 2){1'b0}}, u_lg} >= 40));
	end

	reg [RW:0] f_fs = 0, f_r = 0;
	reg [1:0]  f_st = 2'd0;
	reg [2:0]  f_lg = 3'd0;
	reg [5:0]  f_pos = 6'd0;
	reg [7:0]  f_b = 8'd0;
	reg        f_take = 1'b0, f_crc_bad = 1'b0, f_good = 1'b0;

	always @(posedge i_clk) begin
		f_fs <= u_fs;
		f_r <= u_r;
		f_st <= u_st;
		f_lg <= u_lg;
		f_pos <= u_pos;
		f_b <= u_b;
		f_take <= take;
		f_good <= take && u_st == P_CRC && u_b == crc_byte &&
			  u_crcb == 2'd3;
		f_crc_bad <= take && u_st == P_CRC && u_b != crc_byte;
	end

	wire [RW:0] f_moved = u_fs - f_fs;

	always @*
		if (f_past && u_fs != f_fs) begin
			// the candidate's start moved: by one (a new search
			// from the next byte, or the ring letting go of its
			// oldest byte), past the magic of a frame whose CRC
			// failed (what of it the ring still kept),
			// or past a good frame
			assert(f_moved == 1 || (f_crc_bad && f_moved == FOUR -
					{{(RW - 2){1'b0}}, f_lg}) ||
			       (f_good && u_fs == f_r + 1'b1));
			// and the parser starts again from there
			if (!f_good && f_take)
				assert(u_r == u_fs || (f_st == P_MAGIC &&
						       f_pos == 6'd0));
		end

	// a command comes only from a good frame, and stays until taken
	always @(posedge i_clk)
		if (f_past && o_cmd_valid && !$past(o_cmd_valid))
			assert($past(take) && $past(u_st) == P_CRC &&
			       $past(u_crcb) == 2'd3 && $past(u_b == crc_byte));

	// ---- covers (make fpga-formal runs them: each must be reached) -----
	// The search's moves the properties above speak of: a byte that is
	// no magic skipped; part of the magic, then a wrong byte: the search
	// again from the byte after the candidate's start; the magic whole,
	// into the header; a header that cannot be (its version byte): one
	// byte on. A whole command frame is 44 bytes at a byte every other
	// clock, too deep for a quick cover: the simulation (the cmds
	// scenario) sends good and damaged ones.
	always @* begin
		cover(f_past && f_take && f_st == P_MAGIC && f_pos == 6'd0 &&
		      f_moved == 1);
		cover(f_past && f_take && f_st == P_MAGIC && f_pos == 6'd2 &&
		      f_moved == 1 && u_r == u_fs);
		cover(u_st == P_HDR && u_pos == 6'd4);
		cover(f_past && f_take && f_st == P_HDR && f_moved == 1 &&
		      u_st == P_MAGIC);
	end
`endif
endmodule
