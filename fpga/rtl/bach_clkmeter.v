`default_nettype none
// bach_clkmeter: measures the bus clock against the USB clock. The bus
// clock turns a 4-bit Gray counter; the USB side samples it, adds up how
// far it moved over a window of UCLK_HZ / RES USB clocks, and reports the
// count times RES, in Hz (RES is the resolution: 100 Hz on the board, a
// window of 10 ms). o_alive says the bus clock moved within the last 32
// USB clocks: without it the capture side can neither start nor stop.
module bach_clkmeter #(
	parameter UCLK_HZ = 60000000,
	parameter RES = 100
) (
	input  wire        i_bclk,
	input  wire        i_uclk,
	output reg  [31:0] o_hz = 32'd0,
	output wire        o_alive
);
	localparam WINDOW = UCLK_HZ / RES;

	// bus clock side: a Gray counter
	reg [3:0] b_gray = 4'd0;
	reg [3:0] b_count = 4'd0;

	always @(posedge i_bclk) begin
		b_count <= b_count + 4'd1;
		b_gray <= (b_count + 4'd1) ^ ((b_count + 4'd1) >> 1);
	end

	// USB side
	wire [3:0] u_gray;
	reg  [3:0] u_prev = 4'd0;	// binary count at the last clock
	reg  [31:0] u_acc = 32'd0;	// Hz so far in this window
	reg  [31:0] u_left = 32'd0;	// USB clocks left in the window
	reg  [4:0] u_still = 5'd31;	// USB clocks since the counter moved

	bach_sync #(.W(4)) sync (.i_clk(i_uclk), .i_d(b_gray), .o_q(u_gray));

	// in steps, a register each: Gray to binary, the distance moved,
	// the Hz it is worth
	reg  [3:0]  u_now = 4'd0;
	reg  [3:0]  u_step = 4'd0;	// at most 2: the clocks are close
	reg  [31:0] u_add = 32'd0;

	always @(posedge i_uclk) begin
		u_now <= {u_gray[3], u_gray[3] ^ u_gray[2],
			  u_gray[3] ^ u_gray[2] ^ u_gray[1],
			  u_gray[3] ^ u_gray[2] ^ u_gray[1] ^ u_gray[0]};
		u_step <= u_now - u_prev;
		case (u_step)
		4'd0: u_add <= 32'd0;
		4'd1: u_add <= RES;
		4'd2: u_add <= 2 * RES;
		default: u_add <= 3 * RES;
		endcase
	end

	always @(posedge i_uclk) begin
		u_prev <= u_now;
		if (u_left == 0) begin
			o_hz <= u_acc;
			u_acc <= u_add;
			u_left <= WINDOW - 1;
		end else begin
			u_acc <= u_acc + u_add;
			u_left <= u_left - 1'b1;
		end
		if (u_step != 4'd0)
			u_still <= 5'd0;
		else if (u_still != 5'd31)
			u_still <= u_still + 5'd1;
	end
	assign o_alive = u_still != 5'd31;
endmodule
