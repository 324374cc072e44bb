`default_nettype none
// bach_core: the capture board's gateware, independent of the board.
//
//   bus clock (the CPU's CLK)            USB clock (the FT2232H's CLKOUT)
//
//   pins -> bach_capture --> record FIFO ----> bach_framer -> bach_ft245 -> pins
//             (sampler,   \  (block RAM)      /   ^     ^       |
//              filter,     > boundary FIFO --'    |     |       v
//              policy,       (block RAM)        bach_ctrl <- bach_cmd
//              counters) <--- run, config, counter toggles --'
//   bach_clkmeter: the bus clock measured on the USB clock
//   bach_pattern (in bach_framer): the test patterns, on the USB clock
//
// The bus pins arrive registered at the pads on the bus clock (the board
// top puts those registers in the I/O cells). The identity, the gateware
// version and the capabilities are parameters.
module bach_core #(
	parameter AW = 10,		// record FIFO: 2^AW records
	parameter TW = 48,		// timestamp, index and counter bits
	parameter FRAME_MAX = 1 << (AW - 1), // records per data frame
	parameter PAT_FRAME = 512,	// records per test-pattern frame
	parameter UCLK_HZ = 60000000,	// the USB clock
	parameter AGE = UCLK_HZ / 1000,	// a frame waits at most 1 ms
	parameter METER_RES = 100,	// bus clock measured to 100 Hz
	parameter [15:0] VID = 16'h1209,	// as the udev rule
	parameter [15:0] PID = 16'h4243,
	parameter [7:0]  GW_MAJOR = 8'd1,
	parameter [7:0]  GW_MINOR = 8'd1,	// 1.1: STATUS counts off-bus ADS#s
	parameter [15:0] CAPS = 16'h000f,	// TIMING STALL PATTERN FILTER
	parameter [31:0] BUS_HZ = 32'd66666666,	// nominal bus clock
	parameter [127:0] SERIAL = "0000",
	parameter [255:0] NAME = "bach capture board"
) (
	input  wire        i_bclk,
	input  wire        i_uclk,
	input  wire        i_rst,	// power-on reset, USB clock

	// Pentium bus, registered at the pads on i_bclk
	input  wire        i_ads_n,
	input  wire [31:3] i_a,
	input  wire [7:0]  i_be_n,
	input  wire        i_mio,
	input  wire        i_dc,
	input  wire        i_wr,
	input  wire        i_cache_n,
	input  wire        i_brdy_n,
	input  wire        i_na_n,
	input  wire        i_ken_n,
	input  wire        i_boff_n,
	input  wire        i_hlda,
	input  wire        i_ahold,
	input  wire        i_eads_n,
	input  wire        i_hitm_n,
	output wire        o_hold,	// to the CPU's HOLD
	output wire        o_running,	// a capture runs (START to STOP)

	// FT2232H, 245 synchronous FIFO (see bach_ft245)
	input  wire        i_ft_rxf_n,
	input  wire        i_ft_txe_n,
	input  wire [7:0]  i_ft_data,
	output wire        o_ft_rd_n,
	output wire        o_ft_wr_n,
	output wire        o_ft_oe_n,
	output wire        o_ft_siwu_n,
	output wire [7:0]  o_ft_data,
	output wire        o_ft_data_oe,
	// the same, a clock early, for registers in the I/O cells
	output wire        o_ft_rd_n_d,
	output wire        o_ft_wr_n_d,
	output wire        o_ft_oe_n_d,
	output wire        o_ft_siwu_n_d,
	output wire [7:0]  o_ft_data_d,
	output wire        o_ft_data_oe_d
);
	localparam BAW = 8;			// boundary FIFO: 256
	localparam BW = 1 + (AW + 1) + 2 * TW;	// a boundary

	// A string parameter is right-aligned; the identity wants the first
	// character first and NULs after.
	function [255:0] text(input [255:0] s);
		integer i, n;
		begin
			n = 0;
			for (i = 0; i < 32; i = i + 1)
				if (s[8 * i +: 8] != 8'd0)
					n = i + 1;
			text = 256'd0;
			for (i = 0; i < 32; i = i + 1)
				if (i < n)
					text[8 * i +: 8] = s[8 * (n - 1 - i) +: 8];
		end
	endfunction

	localparam [255:0] NAME_T = text(NAME);
	localparam [255:0] SERIAL_T = text({128'd0, SERIAL});
	localparam [31:0] FIFO_RECORDS = 32'd1 << AW;
	localparam [511:0] IDENT = {NAME_T, SERIAL_T[127:0], FIFO_RECORDS,
				    BUS_HZ, CAPS, GW_MINOR, GW_MAJOR, PID, VID};

	wire b_rst;

	bach_sync sync_rst (.i_clk(i_bclk), .i_d(i_rst), .o_q(b_rst));

	// record FIFO
	wire          b_we;
	wire [63:0]   b_wdata;
	wire [AW:0]   b_fill, u_wptr, u_free;
	wire [AW-1:0] u_raddr;
	wire [63:0]   u_rdata;

	bach_afifo #(.AW(AW), .DW(64)) fifo (
		.i_wclk(i_bclk), .i_we(b_we), .i_wdata(b_wdata),
		.o_wfill(b_fill),
		.i_rclk(i_uclk), .o_rwptr(u_wptr), .i_rfree(u_free),
		.i_raddr(u_raddr), .o_rdata(u_rdata));

	// boundary FIFO
	wire           b_bwe;
	wire [BW-1:0]  b_bdata, u_bdata;
	wire [BAW:0]   b_bfill, u_bwptr, u_bfree;
	wire [BAW-1:0] u_braddr;

	bach_afifo #(.AW(BAW), .DW(BW)) bfifo (
		.i_wclk(i_bclk), .i_we(b_bwe), .i_wdata(b_bdata),
		.o_wfill(b_bfill),
		.i_rclk(i_uclk), .o_rwptr(u_bwptr), .i_rfree(u_bfree),
		.i_raddr(u_braddr), .o_rdata(u_bdata));

	// configuration and control, from the USB clock
	wire          u_run, u_drop, u_timing, u_zero, u_zero_tgl, u_snap_tgl;
	wire [1:0]    u_src;
	wire [15:0]   u_filter;
	wire [AW:0]   u_high, u_low;
	wire [TW-1:0] b_records, b_lost, b_stalled, b_offbus;
	wire [31:0]   b_episodes;
	wire          b_snap_ack;

	bach_capture #(.AW(AW), .BAW(BAW), .TW(TW), .BW(BW)) capture (
		.i_clk(i_bclk), .i_rst(b_rst),
		.i_ads_n(i_ads_n), .i_a(i_a), .i_be_n(i_be_n), .i_mio(i_mio),
		.i_dc(i_dc), .i_wr(i_wr), .i_cache_n(i_cache_n),
		.i_brdy_n(i_brdy_n), .i_na_n(i_na_n), .i_ken_n(i_ken_n),
		.i_boff_n(i_boff_n), .i_hlda(i_hlda),
		.i_ahold(i_ahold), .i_eads_n(i_eads_n), .i_hitm_n(i_hitm_n), .o_hold(o_hold),
		.i_run(u_run), .i_drop(u_drop), .i_filter(u_filter),
		.i_high(u_high), .i_low(u_low), .i_zero_tgl(u_zero_tgl),
		.i_snap_tgl(u_snap_tgl),
		.o_we(b_we), .o_wdata(b_wdata), .i_fill(b_fill),
		.o_bwe(b_bwe), .o_bdata(b_bdata), .i_bfill(b_bfill),
		.o_records(b_records), .o_lost(b_lost),
		.o_episodes(b_episodes), .o_stalled(b_stalled),
		.o_offbus(b_offbus), .o_snap_ack(b_snap_ack));

	wire [31:0] u_hz;
	wire        u_alive, u_holding;

	bach_sync sync_hold (.i_clk(i_uclk), .i_d(o_hold), .o_q(u_holding));

	bach_clkmeter #(.UCLK_HZ(UCLK_HZ), .RES(METER_RES)) meter (
		.i_bclk(i_bclk), .i_uclk(i_uclk), .o_hz(u_hz),
		.o_alive(u_alive));

	// commands in, frames out
	wire         u_rx_valid, u_rx_ready, u_tx_valid, u_tx_room;
	wire [7:0]   u_rx_byte, u_tx_byte;
	wire         u_cmd_valid, u_cfg_ok, u_take;
	wire [31:0]  u_cmd;
	wire [127:0] u_cfg;

	bach_cmd cmd (.i_clk(i_uclk), .i_rst(i_rst), .i_valid(u_rx_valid),
		.i_byte(u_rx_byte), .o_ready(u_rx_ready),
		.o_cmd_valid(u_cmd_valid), .o_cmd(u_cmd), .o_cfg(u_cfg),
		.o_cfg_ok(u_cfg_ok), .i_take(u_take));

	wire        u_rq, u_rq_done, u_start, u_stop, u_last_sent;
	wire [7:0]  u_rq_type;
	wire [31:0] u_rq_cmd, u_rq_result;

	bach_ctrl #(.AW(AW), .CAPS(CAPS)) ctrl (
		.i_clk(i_uclk), .i_rst(i_rst),
		.i_cmd_valid(u_cmd_valid), .i_cmd(u_cmd), .i_cfg(u_cfg),
		.i_cfg_ok(u_cfg_ok), .o_take(u_take),
		.o_rq(u_rq), .o_rq_type(u_rq_type), .o_rq_cmd(u_rq_cmd),
		.o_rq_result(u_rq_result), .i_rq_done(u_rq_done),
		.o_start(u_start), .o_stop(u_stop), .o_run(u_run),
		.o_running(o_running),
		.i_last_sent(u_last_sent),
		.o_drop(u_drop), .o_timing(u_timing), .o_src(u_src),
		.o_filter(u_filter), .o_high(u_high), .o_low(u_low),
		.o_zero(u_zero), .o_zero_tgl(u_zero_tgl),
		.o_snap_tgl(u_snap_tgl), .i_snap_ack(b_snap_ack));

	bach_framer #(.AW(AW), .BAW(BAW), .TW(TW), .BW(BW),
		      .FRAME_MAX(FRAME_MAX),
		      .PAT_FRAME(PAT_FRAME), .AGE(AGE), .IDENT(IDENT)) framer (
		.i_clk(i_uclk), .i_rst(i_rst),
		.i_start(u_start), .i_stop(u_stop), .i_src(u_src),
		.i_timing(u_timing), .i_drop(u_drop), .i_zero(u_zero),
		.o_last_sent(u_last_sent),
		.i_rq(u_rq), .i_rq_type(u_rq_type), .i_rq_cmd(u_rq_cmd),
		.i_rq_result(u_rq_result), .o_rq_done(u_rq_done),
		.i_st_records(b_records), .i_st_lost(b_lost),
		.i_st_episodes(b_episodes), .i_st_stalled(b_stalled),
		.i_st_offbus(b_offbus),
		.i_st_hz(u_alive ? u_hz : 32'd0),
		.i_wptr(u_wptr), .o_raddr(u_raddr), .i_rdata(u_rdata),
		.o_free(u_free),
		.i_bwptr(u_bwptr), .o_braddr(u_braddr), .i_bdata(u_bdata),
		.o_bfree(u_bfree),
		.i_bus_alive(u_alive), .i_holding(u_holding),
		.o_valid(u_tx_valid), .o_byte(u_tx_byte), .i_room(u_tx_room));

	bach_ft245 ft (.i_clk(i_uclk), .i_rst(i_rst),
		.i_rxf_n(i_ft_rxf_n), .i_txe_n(i_ft_txe_n), .i_data(i_ft_data),
		.o_rd_n(o_ft_rd_n), .o_wr_n(o_ft_wr_n), .o_oe_n(o_ft_oe_n),
		.o_siwu_n(o_ft_siwu_n), .o_data(o_ft_data),
		.o_data_oe(o_ft_data_oe),
		.o_rd_n_d(o_ft_rd_n_d), .o_wr_n_d(o_ft_wr_n_d),
		.o_oe_n_d(o_ft_oe_n_d), .o_siwu_n_d(o_ft_siwu_n_d),
		.o_data_d(o_ft_data_d), .o_data_oe_d(o_ft_data_oe_d),
		.i_tx_valid(u_tx_valid), .i_tx_byte(u_tx_byte),
		.o_tx_room(u_tx_room),
		.o_rx_valid(u_rx_valid), .o_rx_byte(u_rx_byte),
		.i_rx_ready(u_rx_ready));
endmodule
