`default_nettype none
// bach_ctrl: obeys the host's commands (docs/board-protocol.md section 6)
// and keeps the configuration. One command at a time: it takes a command
// from bach_cmd, acts, has bach_framer send the reply, and only then takes
// the next. STOP is the long one: the capture side flushes, the framer
// sends what the FIFO holds and the LAST frame, then a STATUS with the
// final counters, then the ACK.
module bach_ctrl #(
	parameter AW = 10,
	parameter [15:0] DEF_HIGH = 16'd49152,	// watermarks when given as 0
	parameter [15:0] DEF_LOW = 16'd16384,
	parameter [15:0] CAPS = 16'h000f	// TIMING STALL PATTERN FILTER
) (
	input  wire         i_clk,
	input  wire         i_rst,

	// commands
	input  wire         i_cmd_valid,
	input  wire [31:0]  i_cmd,
	input  wire [127:0] i_cfg,
	input  wire         i_cfg_ok,
	output wire         o_take,

	// replies, sent by the framer
	output reg          o_rq = 1'b0,
	output reg  [7:0]   o_rq_type = 8'd0,
	output reg  [31:0]  o_rq_cmd = 32'd0,
	output reg  [31:0]  o_rq_result = 32'd0,
	input  wire         i_rq_done,

	// the capture
	output reg          o_start = 1'b0,	// pulse
	output reg          o_stop = 1'b0,	// pulse
	output reg          o_run = 1'b0,	// level, to the bus clock
	output wire         o_running,	// START to the end of STOP
	input  wire         i_last_sent,

	// configuration (power-on: all zero, i.e. the defaults)
	output reg          o_drop = 1'b0,
	output reg          o_timing = 1'b0,
	output reg  [1:0]   o_src = 2'd0,
	output reg  [15:0]  o_filter = 16'd0,
	output reg  [AW:0]  o_high = {1'b0, DEF_HIGH[15 -: AW]},
	output reg  [AW:0]  o_low = {1'b0, DEF_LOW[15 -: AW]},

	// counters: zero them, copy them (toggles to the bus clock)
	output reg          o_zero = 1'b0,	// pulse, for the framer
	output reg          o_zero_tgl = 1'b0,
	output reg          o_snap_tgl = 1'b0,
	input  wire         i_snap_ack
);
	localparam [7:0] T_STATUS = 8'd2, T_IDENTITY = 8'd3, T_ACK = 8'd4;
	localparam [31:0] C_IDENTIFY = 32'd1, C_START = 32'd2, C_STOP = 32'd3,
			  C_CONFIGURE = 32'd4, C_STATUS = 32'd5,
			  C_RESET_COUNTERS = 32'd6;
	localparam [31:0] OK = 32'd0, UNKNOWN = 32'd1, INVALID = 32'd2,
			  BUSY = 32'd3, UNSUPPORTED = 32'd4;
	localparam [2:0] K_WAIT = 3'd0, K_REPLY = 3'd1, K_SNAP = 3'd2,
			 K_STOPPING = 3'd3, K_SNAP_FINAL = 3'd4,
			 K_STATUS_FINAL = 3'd5;

	reg  [2:0] u_st = K_WAIT;	// what the controller waits for
	reg        u_running = 1'b0;	// between START and the end of STOP
	reg  [7:0] u_wait = 8'd0;	// clocks waited for the counters' copy
	wire       snap_ack;

	bach_sync sync_ack (.i_clk(i_clk), .i_d(i_snap_ack), .o_q(snap_ack));

	assign o_take = u_st == K_WAIT && i_cmd_valid && !i_rst;
	assign o_running = u_running;

	// CONFIGURE: the fields, and what is wrong with them
	wire [7:0]  c_policy = i_cfg[7:0];
	wire [7:0]  c_timing = i_cfg[15:8];
	wire [7:0]  c_src = i_cfg[23:16];
	wire [15:0] c_filter = i_cfg[47:32];
	wire [15:0] c_high = i_cfg[63:48] != 16'd0 ? i_cfg[63:48] : DEF_HIGH;
	wire [15:0] c_low = i_cfg[79:64] != 16'd0 ? i_cfg[79:64] : DEF_LOW;
	// reserved fields: the receiver ignores them
	wire        unused_reserved = &{1'b0, i_cfg[127:80], i_cfg[31:24]};
	wire        c_invalid = !i_cfg_ok || c_policy > 8'd1 ||
			c_timing > 8'd1 || c_src > 8'd2 || c_low >= c_high;
	wire        c_unsupported = (c_policy == 8'd0 && !CAPS[1]) ||
			(c_timing != 8'd0 && !CAPS[0]) ||
			(c_src != 8'd0 && !CAPS[2]) ||
			(c_filter != 16'd0 && !CAPS[3]);

	task reply(input [7:0] t, input [31:0] c, input [31:0] r);
		begin
			o_rq <= 1'b1;
			o_rq_type <= t;
			o_rq_cmd <= c;
			o_rq_result <= r;
			u_st <= K_REPLY;
		end
	endtask

	// the copy of the counters is there, or the bus clock is not
	wire snap_ready = snap_ack == o_snap_tgl || u_wait == 8'd255;

	always @(posedge i_clk) begin
		o_start <= 1'b0;
		o_stop <= 1'b0;
		o_zero <= 1'b0;
		if (u_wait != 8'd255)
			u_wait <= u_wait + 8'd1;

		if (i_rst) begin
			u_st <= K_WAIT;
			o_rq <= 1'b0;
			o_run <= 1'b0;
			u_running <= 1'b0;
		end else case (u_st)
		K_WAIT:
			if (i_cmd_valid) case (i_cmd)
			C_IDENTIFY:
				reply(T_IDENTITY, C_IDENTIFY, OK);
			C_START:
				if (u_running) begin
					reply(T_ACK, i_cmd, BUSY);
				end else begin
					u_running <= 1'b1;
					o_start <= 1'b1;
					o_run <= o_src == 2'd0;
					reply(T_ACK, i_cmd, OK);
				end
			C_STOP:
				if (!u_running) begin
					reply(T_ACK, i_cmd, OK);
				end else begin
					o_stop <= 1'b1;
					o_run <= 1'b0;
					u_st <= K_STOPPING;
				end
			C_CONFIGURE:
				if (u_running) begin
					reply(T_ACK, i_cmd, BUSY);
				end else if (c_invalid) begin
					reply(T_ACK, i_cmd, INVALID);
				end else if (c_unsupported) begin
					reply(T_ACK, i_cmd, UNSUPPORTED);
				end else begin
					o_drop <= c_policy[0];
					o_timing <= c_timing[0];
					o_src <= c_src[1:0];
					o_filter <= c_filter;
					o_high <= {1'b0, c_high[15 -: AW]};
					o_low <= {1'b0, c_low[15 -: AW]};
					reply(T_ACK, i_cmd, OK);
				end
			C_STATUS: begin
				o_snap_tgl <= ~o_snap_tgl;
				u_wait <= 8'd0;
				u_st <= K_SNAP;
			end
			C_RESET_COUNTERS: begin
				o_zero <= 1'b1;
				o_zero_tgl <= ~o_zero_tgl;
				reply(T_ACK, i_cmd, OK);
			end
			default:
				reply(T_ACK, i_cmd, UNKNOWN);
			endcase

		K_SNAP:
			if (snap_ready)
				reply(T_STATUS, 32'd0, OK);

		K_STOPPING:
			// the framer sent the LAST frame: the counters are final
			if (i_last_sent) begin
				u_running <= 1'b0;
				o_snap_tgl <= ~o_snap_tgl;
				u_wait <= 8'd0;
				u_st <= K_SNAP_FINAL;
			end

		K_SNAP_FINAL:
			if (snap_ready) begin
				reply(T_STATUS, 32'd0, OK);
				u_st <= K_STATUS_FINAL;
			end

		K_STATUS_FINAL:
			if (i_rq_done) begin
				o_rq <= 1'b0;
				reply(T_ACK, C_STOP, OK);
			end

		default:
			// K_REPLY
			if (i_rq_done) begin
				o_rq <= 1'b0;
				u_st <= K_WAIT;
			end
		endcase
	end
endmodule
