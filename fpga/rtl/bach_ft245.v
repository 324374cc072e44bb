`default_nettype none
// bach_ft245: the FTDI FT2232H (or FT232H) in 245 synchronous FIFO mode,
// on its 60 MHz CLKOUT. One 8-bit bus, turned around between the two
// directions:
//
//   to the host:   a byte is written at a rising edge where WR# and TXE#
//                  are both low (TXE# high: the chip's buffer is full);
//   from the host: with OE# low the chip drives the bus; a byte is read at
//                  a rising edge where RD# and RXF# are both low.
//
// WR# and RD# are registers; TXE# and RXF# are used at the same edge they
// are sampled, like a valid/ready handshake, so that no byte is lost or
// sent twice when the chip's buffer fills: a byte not taken stays on the
// bus. Host bytes (commands, a few dozen bytes now and then) win: when RXF#
// goes low the adapter stops writing, releases the bus, lowers OE# a clock
// before RD#, reads while RXF# stays low, and turns the bus back.
// When its output runs dry after sending, it pulses SIWU# so that the chip
// sends what it holds as a short packet at once (board-protocol section 1).
//
// The *_d outputs are the next values of the pin registers, for a board
// top that puts these registers in the I/O cells.
module bach_ft245 (
	input  wire       i_clk,
	input  wire       i_rst,

	// the chip's pins (data split by direction)
	input  wire       i_rxf_n,
	input  wire       i_txe_n,
	input  wire [7:0] i_data,
	output reg        o_rd_n = 1'b1,
	output reg        o_wr_n = 1'b1,
	output reg        o_oe_n = 1'b1,
	output reg        o_siwu_n = 1'b1,
	output reg  [7:0] o_data = 8'd0,
	output reg        o_data_oe = 1'b1,	// the FPGA drives the bus
	output reg        o_rd_n_d, o_wr_n_d, o_oe_n_d, o_siwu_n_d, o_data_oe_d,
	output reg  [7:0] o_data_d,

	// bytes to the host
	input  wire       i_tx_valid,
	input  wire [7:0] i_tx_byte,
	output wire       o_tx_room,	// room for two more bytes
	// bytes from the host
	output reg        o_rx_valid = 1'b0,	// a clock after it was read
	output reg  [7:0] o_rx_byte = 8'd0,
	input  wire       i_rx_ready
);
	localparam [2:0] M_TX = 3'd0, M_OFF = 3'd1, M_OE = 3'd2, M_RX = 3'd3,
			 M_BACK = 3'd4;

	// the byte queue from the framer
	reg  [7:0] q_mem [0:7];
	reg  [2:0] q_rd = 3'd0, q_wr = 3'd0;
	reg  [3:0] q_n = 4'd0;
	wire       q_any = q_n != 4'd0;
	wire [7:0] q_head = q_mem[q_rd];
	reg        q_pop;

	assign o_tx_room = q_n <= 4'd6;

	always @(posedge i_clk) begin
		if (i_tx_valid) begin
			q_mem[q_wr] <= i_tx_byte;
			q_wr <= q_wr + 3'd1;
		end
		if (q_pop)
			q_rd <= q_rd + 3'd1;
		q_n <= q_n + {3'd0, i_tx_valid} - {3'd0, q_pop};
	end

	reg  [2:0] u_mode = M_TX;
	reg        u_txv = 1'b0;	// o_data holds a byte not yet written
	reg  [2:0] u_idle = 3'd0;	// clocks with nothing to send
	reg        u_dirty = 1'b0;	// bytes went out since the last SIWU#
	reg  [2:0] mode;
	reg        txv;

	// this edge: a byte written to the chip, a byte read from it
	wire       taken = !o_wr_n && !i_txe_n;
	wire       pending = u_txv && !taken;	// still to write after it

	// host bytes are registered once more before they are looked at
	always @(posedge i_clk) begin
		o_rx_valid <= !o_rd_n && !i_rxf_n;
		o_rx_byte <= i_data;
	end

	always @* begin
		mode = u_mode;
		txv = pending;
		o_data_d = o_data;
		o_wr_n_d = 1'b1;
		o_rd_n_d = 1'b1;
		o_oe_n_d = 1'b1;
		o_siwu_n_d = 1'b1;
		o_data_oe_d = 1'b0;
		q_pop = 1'b0;

		case (u_mode)
		M_TX:
			if (!i_rxf_n && i_rx_ready) begin
				// the host has bytes: let go of the bus
				mode = M_OFF;
			end else begin
				o_data_oe_d = 1'b1;
				if (!pending && q_any) begin
					q_pop = 1'b1;
					o_data_d = q_head;
					txv = 1'b1;
				end
				o_wr_n_d = !txv;
				if (!txv && u_dirty && u_idle == 3'd4)
					o_siwu_n_d = 1'b0;
			end
		M_OFF: begin
			// the bus floats; the chip drives it from the next clock
			o_oe_n_d = 1'b0;
			mode = M_OE;
		end
		M_OE: begin
			o_oe_n_d = 1'b0;
			o_rd_n_d = 1'b0;
			mode = M_RX;
		end
		M_RX:
			if (!i_rxf_n && i_rx_ready) begin
				o_oe_n_d = 1'b0;
				o_rd_n_d = 1'b0;
			end else begin
				mode = M_BACK;
			end
		default:
			// M_BACK: the chip let go of the bus a clock ago
			mode = M_TX;
		endcase
		if (i_rst) begin
			mode = M_TX;
			txv = 1'b0;
			o_wr_n_d = 1'b1;
			o_rd_n_d = 1'b1;
			o_oe_n_d = 1'b1;
			o_siwu_n_d = 1'b1;
			o_data_oe_d = 1'b1;
			q_pop = 1'b0;
		end
	end

	// the pin registers take their next values, reset included, so
	// that copies in the I/O cells always agree with them
	always @(posedge i_clk) begin
		u_mode <= mode;
		u_txv <= txv;
		o_wr_n <= o_wr_n_d;
		o_data <= o_data_d;
		o_rd_n <= o_rd_n_d;
		o_oe_n <= o_oe_n_d;
		o_siwu_n <= o_siwu_n_d;
		o_data_oe <= o_data_oe_d;
	end

	always @(posedge i_clk) begin
		if (i_rst) begin
			u_dirty <= 1'b0;
			u_idle <= 3'd0;
		end else begin
			// SIWU# once the output ran dry for four clocks
			if (taken)
				u_dirty <= 1'b1;
			else if (!o_siwu_n_d)
				u_dirty <= 1'b0;
			if (txv || u_mode != M_TX)
				u_idle <= 3'd0;
			else if (u_idle != 3'd7)
				u_idle <= u_idle + 3'd1;
		end
	end

`ifdef FORMAL
	// ---- properties (make fpga-formal: fpga/bench/formal/ft245.ys) ------
	//
	// The environment: the framer sends a byte only when it saw room at
	// the clock before (bach_framer registers its byte), the chip's TXE#
	// and RXF# do anything at any edge, the reset is at power-on only.
	reg f_past = 1'b0, f_room = 1'b0;

	always @(posedge i_clk) begin
		f_past <= 1'b1;
		f_room <= o_tx_room;
	end

	always @* begin
		assume(!i_rst);
		if (i_tx_valid)
			assume(f_room);
	end

	// To the host, across TXE#: the bytes the chip takes (edges with WR#
	// and TXE# low) are the bytes the framer gave, in order, each once.
	// f_in, f_out count them (mod 256); the byte number f_k, given once,
	// is tracked from the queue to the pins.
	// (f_taken: the chip's rule, stated here on its own)
	wire       f_taken = !o_wr_n && !i_txe_n;
	reg  [7:0] f_in = 8'd0, f_out = 8'd0;
	(* anyconst *) reg [7:0] f_k;
	reg  [7:0] f_v = 8'd0;
	reg        f_got = 1'b0, f_sent = 1'b0;
	wire [7:0] f_fly = {4'd0, q_n} + {7'd0, u_txv};	// in flight
	wire [7:0] f_d = f_k - f_out;		// f_k's place in the flight

	always @*
		if (f_got)
			assume(!(i_tx_valid && f_in == f_k));

	always @(posedge i_clk) begin
		if (i_tx_valid)
			f_in <= f_in + 8'd1;
		if (f_taken)
			f_out <= f_out + 8'd1;
		if (i_tx_valid && f_in == f_k) begin
			f_got <= 1'b1;
			f_v <= i_tx_byte;
		end
		if (f_taken && f_out == f_k)
			f_sent <= 1'b1;
	end

	always @* begin
		// a byte the chip takes is a byte given: none invented
		if (f_taken)
			assert(u_txv);
		// the queue never overflows; given = taken + in flight
		assert(q_n <= 4'd8 && q_wr - q_rd == q_n[2:0]);
		assert(f_in - f_out == f_fly);
		// the tracked byte: taken whole, with its value, once
		if (f_taken && f_out == f_k)
			assert(f_got && !f_sent && o_data == f_v);
		// (for the induction: where it is)
		if (f_got && !f_sent) begin
			assert(f_d < f_fly);
			if (u_txv && f_d == 8'd0)
				assert(o_data == f_v);
			else
				assert(q_mem[q_rd + f_d[2:0] - {2'd0, u_txv}] ==
				       f_v);
		end
		if (!f_got)
			assert(!f_sent && f_d >= f_fly);
		// after it, taken stays behind given, counted from f_k + 1
		// (no byte number comes twice)
		if (f_sent)
			assert(f_out - f_k - 8'd1 <= f_in - f_k - 8'd1);
		// WR# only in TX mode, driving the bus, OE# and RD# high
		if (!o_wr_n)
			assert(o_data_oe && o_oe_n && o_rd_n);
	end

	// From the host, the RXF# handshake: the FPGA lets go of the bus a
	// clock before OE# falls and drives it again a clock after OE# rises
	// (one driver at a time); RD# only with OE# low since the clock
	// before; every byte read (RD# and RXF# low at an edge) is delivered
	// once, with its value, the clock after; none while the host has
	// none.
	reg f_oe_q = 1'b0, f_drv_q = 1'b1, f_rd = 1'b0;
	reg [7:0] f_rb = 8'd0;

	always @(posedge i_clk) begin
		f_oe_q <= !o_oe_n;
		f_drv_q <= o_data_oe;
		f_rd <= !o_rd_n && !i_rxf_n;
		f_rb <= i_data;
	end

	always @* begin
		if (!o_oe_n)
			assert(!o_data_oe && !f_drv_q);
		if (o_data_oe && f_past)
			assert(!f_oe_q);
		if (!o_rd_n)
			assert(!o_oe_n && f_oe_q);
		if (f_past)
			assert(o_rx_valid == f_rd &&
			       (!o_rx_valid || o_rx_byte == f_rb));
		// (for the induction: the modes and their pins)
		assert(u_mode <= M_BACK);
		if (u_mode == M_OE || u_mode == M_RX)
			assert(!o_oe_n && !o_data_oe);
		if (u_mode == M_OFF)
			assert(o_oe_n && !o_data_oe && o_rd_n);
		if (u_mode == M_BACK)
			assert(!o_data_oe);
		if (u_mode == M_TX)
			assert(!f_oe_q && o_oe_n && o_rd_n);
	end

	// ---- covers (make fpga-formal runs them: each must be reached) -----
	// A byte held across TXE# high and taken after it; the queue full;
	// the tracked byte taken; a byte read from the host; a byte pending
	// across a turn of the bus to the host and back, then taken.
	reg f_held = 1'b0, f_turned = 1'b0;

	always @(posedge i_clk) begin
		if (!o_wr_n && i_txe_n)
			f_held <= 1'b1;
		if (u_txv && u_mode == M_RX)
			f_turned <= 1'b1;
	end

	always @* begin
		cover(f_held && f_taken);
		cover(q_n == 4'd8);
		cover(f_sent);
		cover(o_rx_valid);
		cover(f_turned && f_taken);
	end
`endif
endmodule
