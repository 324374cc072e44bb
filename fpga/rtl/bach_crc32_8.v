`default_nettype none
// bach_crc32_8: one byte of the IEEE 802.3 CRC-32 (zlib's crc32(),
// polynomial 0x04c11db7 reflected, i.e. 0xedb88320 shifted right, least
// significant bit first). Combinational: o_crc is the register after
// i_byte when the register held i_crc. A frame starts from 0xffffffff and
// sends the complement of the register (docs/board-protocol.md section 2).
module bach_crc32_8 (
	input  wire [31:0] i_crc,
	input  wire [7:0]  i_byte,
	output reg  [31:0] o_crc
);
	integer i;

	always @* begin
		o_crc = i_crc;
		for (i = 0; i < 8; i = i + 1)
			o_crc = {1'b0, o_crc[31:1]} ^
				((o_crc[0] ^ i_byte[i]) ? 32'hedb88320 : 32'h0);
	end
endmodule
