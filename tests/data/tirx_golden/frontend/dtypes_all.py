# Every dtype name of TIRx (surface.json, but void) as a scalar parameter type and a local array element type.
from tirx.script import tirx as T


@T.function
def f(
    a0: T.bf16,
    a1: T.bfloat16,
    a2: T.bool,
    a3: T.boolean,
    a4: T.f16,
    a5: T.f32,
    a6: T.f64,
    a7: T.float16,
    a8: T.float16x16,
    a9: T.float16x2,
    a10: T.float16x32,
    a11: T.float16x4,
    a12: T.float16x64,
    a13: T.float16x8,
    a14: T.float32,
    a15: T.float32x16,
    a16: T.float32x2,
    a17: T.float32x32,
    a18: T.float32x4,
    a19: T.float32x64,
    a20: T.float32x8,
    a21: T.float4_e2m1fn,
    a22: T.float4_e2m1fnx16,
    a23: T.float4_e2m1fnx2,
    a24: T.float4_e2m1fnx32,
    a25: T.float4_e2m1fnx4,
    a26: T.float4_e2m1fnx64,
    a27: T.float4_e2m1fnx8,
    a28: T.float64,
    a29: T.float64x16,
    a30: T.float64x2,
    a31: T.float64x32,
    a32: T.float64x4,
    a33: T.float64x64,
    a34: T.float64x8,
    a35: T.float6_e2m3fn,
    a36: T.float6_e2m3fnx16,
    a37: T.float6_e2m3fnx2,
    a38: T.float6_e2m3fnx32,
    a39: T.float6_e2m3fnx4,
    a40: T.float6_e2m3fnx64,
    a41: T.float6_e2m3fnx8,
    a42: T.float6_e3m2fn,
    a43: T.float6_e3m2fnx16,
    a44: T.float6_e3m2fnx2,
    a45: T.float6_e3m2fnx32,
    a46: T.float6_e3m2fnx4,
    a47: T.float6_e3m2fnx64,
    a48: T.float6_e3m2fnx8,
    a49: T.float8_e3m4,
    a50: T.float8_e3m4x16,
    a51: T.float8_e3m4x2,
    a52: T.float8_e3m4x32,
    a53: T.float8_e3m4x4,
    a54: T.float8_e3m4x64,
    a55: T.float8_e3m4x8,
    a56: T.float8_e4m3,
    a57: T.float8_e4m3b11fnuz,
    a58: T.float8_e4m3b11fnuzx16,
    a59: T.float8_e4m3b11fnuzx2,
    a60: T.float8_e4m3b11fnuzx32,
    a61: T.float8_e4m3b11fnuzx4,
    a62: T.float8_e4m3b11fnuzx64,
    a63: T.float8_e4m3b11fnuzx8,
    a64: T.float8_e4m3fn,
    a65: T.float8_e4m3fnuz,
    a66: T.float8_e4m3fnuzx16,
    a67: T.float8_e4m3fnuzx2,
    a68: T.float8_e4m3fnuzx32,
    a69: T.float8_e4m3fnuzx4,
    a70: T.float8_e4m3fnuzx64,
    a71: T.float8_e4m3fnuzx8,
    a72: T.float8_e4m3fnx16,
    a73: T.float8_e4m3fnx2,
    a74: T.float8_e4m3fnx32,
    a75: T.float8_e4m3fnx4,
    a76: T.float8_e4m3fnx64,
    a77: T.float8_e4m3fnx8,
    a78: T.float8_e4m3x16,
    a79: T.float8_e4m3x2,
    a80: T.float8_e4m3x32,
    a81: T.float8_e4m3x4,
    a82: T.float8_e4m3x64,
    a83: T.float8_e4m3x8,
    a84: T.float8_e5m2,
    a85: T.float8_e5m2fnuz,
    a86: T.float8_e5m2fnuzx16,
    a87: T.float8_e5m2fnuzx2,
    a88: T.float8_e5m2fnuzx32,
    a89: T.float8_e5m2fnuzx4,
    a90: T.float8_e5m2fnuzx64,
    a91: T.float8_e5m2fnuzx8,
    a92: T.float8_e5m2x16,
    a93: T.float8_e5m2x2,
    a94: T.float8_e5m2x32,
    a95: T.float8_e5m2x4,
    a96: T.float8_e5m2x64,
    a97: T.float8_e5m2x8,
    a98: T.float8_e8m0fnu,
    a99: T.float8_e8m0fnux16,
    a100: T.float8_e8m0fnux2,
    a101: T.float8_e8m0fnux32,
    a102: T.float8_e8m0fnux4,
    a103: T.float8_e8m0fnux64,
    a104: T.float8_e8m0fnux8,
    a105: T.i16,
    a106: T.i32,
    a107: T.i64,
    a108: T.i8,
    a109: T.int16,
    a110: T.int16x16,
    a111: T.int16x2,
    a112: T.int16x32,
    a113: T.int16x4,
    a114: T.int16x64,
    a115: T.int16x8,
    a116: T.int32,
    a117: T.int32x16,
    a118: T.int32x2,
    a119: T.int32x32,
    a120: T.int32x4,
    a121: T.int32x64,
    a122: T.int32x8,
    a123: T.int64,
    a124: T.int64x16,
    a125: T.int64x2,
    a126: T.int64x32,
    a127: T.int64x4,
    a128: T.int64x64,
    a129: T.int64x8,
    a130: T.int8,
    a131: T.int8x16,
    a132: T.int8x2,
    a133: T.int8x32,
    a134: T.int8x4,
    a135: T.int8x64,
    a136: T.int8x8,
    a137: T.u16,
    a138: T.u32,
    a139: T.u64,
    a140: T.u8,
    a141: T.uint16,
    a142: T.uint16x16,
    a143: T.uint16x2,
    a144: T.uint16x32,
    a145: T.uint16x4,
    a146: T.uint16x64,
    a147: T.uint16x8,
    a148: T.uint32,
    a149: T.uint32x16,
    a150: T.uint32x2,
    a151: T.uint32x32,
    a152: T.uint32x4,
    a153: T.uint32x64,
    a154: T.uint32x8,
    a155: T.uint64,
    a156: T.uint64x16,
    a157: T.uint64x2,
    a158: T.uint64x32,
    a159: T.uint64x4,
    a160: T.uint64x64,
    a161: T.uint64x8,
    a162: T.uint8,
    a163: T.uint8x16,
    a164: T.uint8x2,
    a165: T.uint8x32,
    a166: T.uint8x4,
    a167: T.uint8x64,
    a168: T.uint8x8,
):
    T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
    b0 = T.alloc_local((2,), T.bf16)
    b1 = T.alloc_local((2,), T.bfloat16)
    b2 = T.alloc_local((2,), T.bool)
    b3 = T.alloc_local((2,), T.boolean)
    b4 = T.alloc_local((2,), T.f16)
    b5 = T.alloc_local((2,), T.f32)
    b6 = T.alloc_local((2,), T.f64)
    b7 = T.alloc_local((2,), T.float16)
    b8 = T.alloc_local((2,), T.float16x16)
    b9 = T.alloc_local((2,), T.float16x2)
    b10 = T.alloc_local((2,), T.float16x32)
    b11 = T.alloc_local((2,), T.float16x4)
    b12 = T.alloc_local((2,), T.float16x64)
    b13 = T.alloc_local((2,), T.float16x8)
    b14 = T.alloc_local((2,), T.float32)
    b15 = T.alloc_local((2,), T.float32x16)
    b16 = T.alloc_local((2,), T.float32x2)
    b17 = T.alloc_local((2,), T.float32x32)
    b18 = T.alloc_local((2,), T.float32x4)
    b19 = T.alloc_local((2,), T.float32x64)
    b20 = T.alloc_local((2,), T.float32x8)
    b21 = T.alloc_local((2,), T.float4_e2m1fn)
    b22 = T.alloc_local((2,), T.float4_e2m1fnx16)
    b23 = T.alloc_local((2,), T.float4_e2m1fnx2)
    b24 = T.alloc_local((2,), T.float4_e2m1fnx32)
    b25 = T.alloc_local((2,), T.float4_e2m1fnx4)
    b26 = T.alloc_local((2,), T.float4_e2m1fnx64)
    b27 = T.alloc_local((2,), T.float4_e2m1fnx8)
    b28 = T.alloc_local((2,), T.float64)
    b29 = T.alloc_local((2,), T.float64x16)
    b30 = T.alloc_local((2,), T.float64x2)
    b31 = T.alloc_local((2,), T.float64x32)
    b32 = T.alloc_local((2,), T.float64x4)
    b33 = T.alloc_local((2,), T.float64x64)
    b34 = T.alloc_local((2,), T.float64x8)
    b35 = T.alloc_local((2,), T.float6_e2m3fn)
    b36 = T.alloc_local((2,), T.float6_e2m3fnx16)
    b37 = T.alloc_local((2,), T.float6_e2m3fnx2)
    b38 = T.alloc_local((2,), T.float6_e2m3fnx32)
    b39 = T.alloc_local((2,), T.float6_e2m3fnx4)
    b40 = T.alloc_local((2,), T.float6_e2m3fnx64)
    b41 = T.alloc_local((2,), T.float6_e2m3fnx8)
    b42 = T.alloc_local((2,), T.float6_e3m2fn)
    b43 = T.alloc_local((2,), T.float6_e3m2fnx16)
    b44 = T.alloc_local((2,), T.float6_e3m2fnx2)
    b45 = T.alloc_local((2,), T.float6_e3m2fnx32)
    b46 = T.alloc_local((2,), T.float6_e3m2fnx4)
    b47 = T.alloc_local((2,), T.float6_e3m2fnx64)
    b48 = T.alloc_local((2,), T.float6_e3m2fnx8)
    b49 = T.alloc_local((2,), T.float8_e3m4)
    b50 = T.alloc_local((2,), T.float8_e3m4x16)
    b51 = T.alloc_local((2,), T.float8_e3m4x2)
    b52 = T.alloc_local((2,), T.float8_e3m4x32)
    b53 = T.alloc_local((2,), T.float8_e3m4x4)
    b54 = T.alloc_local((2,), T.float8_e3m4x64)
    b55 = T.alloc_local((2,), T.float8_e3m4x8)
    b56 = T.alloc_local((2,), T.float8_e4m3)
    b57 = T.alloc_local((2,), T.float8_e4m3b11fnuz)
    b58 = T.alloc_local((2,), T.float8_e4m3b11fnuzx16)
    b59 = T.alloc_local((2,), T.float8_e4m3b11fnuzx2)
    b60 = T.alloc_local((2,), T.float8_e4m3b11fnuzx32)
    b61 = T.alloc_local((2,), T.float8_e4m3b11fnuzx4)
    b62 = T.alloc_local((2,), T.float8_e4m3b11fnuzx64)
    b63 = T.alloc_local((2,), T.float8_e4m3b11fnuzx8)
    b64 = T.alloc_local((2,), T.float8_e4m3fn)
    b65 = T.alloc_local((2,), T.float8_e4m3fnuz)
    b66 = T.alloc_local((2,), T.float8_e4m3fnuzx16)
    b67 = T.alloc_local((2,), T.float8_e4m3fnuzx2)
    b68 = T.alloc_local((2,), T.float8_e4m3fnuzx32)
    b69 = T.alloc_local((2,), T.float8_e4m3fnuzx4)
    b70 = T.alloc_local((2,), T.float8_e4m3fnuzx64)
    b71 = T.alloc_local((2,), T.float8_e4m3fnuzx8)
    b72 = T.alloc_local((2,), T.float8_e4m3fnx16)
    b73 = T.alloc_local((2,), T.float8_e4m3fnx2)
    b74 = T.alloc_local((2,), T.float8_e4m3fnx32)
    b75 = T.alloc_local((2,), T.float8_e4m3fnx4)
    b76 = T.alloc_local((2,), T.float8_e4m3fnx64)
    b77 = T.alloc_local((2,), T.float8_e4m3fnx8)
    b78 = T.alloc_local((2,), T.float8_e4m3x16)
    b79 = T.alloc_local((2,), T.float8_e4m3x2)
    b80 = T.alloc_local((2,), T.float8_e4m3x32)
    b81 = T.alloc_local((2,), T.float8_e4m3x4)
    b82 = T.alloc_local((2,), T.float8_e4m3x64)
    b83 = T.alloc_local((2,), T.float8_e4m3x8)
    b84 = T.alloc_local((2,), T.float8_e5m2)
    b85 = T.alloc_local((2,), T.float8_e5m2fnuz)
    b86 = T.alloc_local((2,), T.float8_e5m2fnuzx16)
    b87 = T.alloc_local((2,), T.float8_e5m2fnuzx2)
    b88 = T.alloc_local((2,), T.float8_e5m2fnuzx32)
    b89 = T.alloc_local((2,), T.float8_e5m2fnuzx4)
    b90 = T.alloc_local((2,), T.float8_e5m2fnuzx64)
    b91 = T.alloc_local((2,), T.float8_e5m2fnuzx8)
    b92 = T.alloc_local((2,), T.float8_e5m2x16)
    b93 = T.alloc_local((2,), T.float8_e5m2x2)
    b94 = T.alloc_local((2,), T.float8_e5m2x32)
    b95 = T.alloc_local((2,), T.float8_e5m2x4)
    b96 = T.alloc_local((2,), T.float8_e5m2x64)
    b97 = T.alloc_local((2,), T.float8_e5m2x8)
    b98 = T.alloc_local((2,), T.float8_e8m0fnu)
    b99 = T.alloc_local((2,), T.float8_e8m0fnux16)
    b100 = T.alloc_local((2,), T.float8_e8m0fnux2)
    b101 = T.alloc_local((2,), T.float8_e8m0fnux32)
    b102 = T.alloc_local((2,), T.float8_e8m0fnux4)
    b103 = T.alloc_local((2,), T.float8_e8m0fnux64)
    b104 = T.alloc_local((2,), T.float8_e8m0fnux8)
    b105 = T.alloc_local((2,), T.i16)
    b106 = T.alloc_local((2,), T.i32)
    b107 = T.alloc_local((2,), T.i64)
    b108 = T.alloc_local((2,), T.i8)
    b109 = T.alloc_local((2,), T.int16)
    b110 = T.alloc_local((2,), T.int16x16)
    b111 = T.alloc_local((2,), T.int16x2)
    b112 = T.alloc_local((2,), T.int16x32)
    b113 = T.alloc_local((2,), T.int16x4)
    b114 = T.alloc_local((2,), T.int16x64)
    b115 = T.alloc_local((2,), T.int16x8)
    b116 = T.alloc_local((2,), T.int32)
    b117 = T.alloc_local((2,), T.int32x16)
    b118 = T.alloc_local((2,), T.int32x2)
    b119 = T.alloc_local((2,), T.int32x32)
    b120 = T.alloc_local((2,), T.int32x4)
    b121 = T.alloc_local((2,), T.int32x64)
    b122 = T.alloc_local((2,), T.int32x8)
    b123 = T.alloc_local((2,), T.int64)
    b124 = T.alloc_local((2,), T.int64x16)
    b125 = T.alloc_local((2,), T.int64x2)
    b126 = T.alloc_local((2,), T.int64x32)
    b127 = T.alloc_local((2,), T.int64x4)
    b128 = T.alloc_local((2,), T.int64x64)
    b129 = T.alloc_local((2,), T.int64x8)
    b130 = T.alloc_local((2,), T.int8)
    b131 = T.alloc_local((2,), T.int8x16)
    b132 = T.alloc_local((2,), T.int8x2)
    b133 = T.alloc_local((2,), T.int8x32)
    b134 = T.alloc_local((2,), T.int8x4)
    b135 = T.alloc_local((2,), T.int8x64)
    b136 = T.alloc_local((2,), T.int8x8)
    b137 = T.alloc_local((2,), T.u16)
    b138 = T.alloc_local((2,), T.u32)
    b139 = T.alloc_local((2,), T.u64)
    b140 = T.alloc_local((2,), T.u8)
    b141 = T.alloc_local((2,), T.uint16)
    b142 = T.alloc_local((2,), T.uint16x16)
    b143 = T.alloc_local((2,), T.uint16x2)
    b144 = T.alloc_local((2,), T.uint16x32)
    b145 = T.alloc_local((2,), T.uint16x4)
    b146 = T.alloc_local((2,), T.uint16x64)
    b147 = T.alloc_local((2,), T.uint16x8)
    b148 = T.alloc_local((2,), T.uint32)
    b149 = T.alloc_local((2,), T.uint32x16)
    b150 = T.alloc_local((2,), T.uint32x2)
    b151 = T.alloc_local((2,), T.uint32x32)
    b152 = T.alloc_local((2,), T.uint32x4)
    b153 = T.alloc_local((2,), T.uint32x64)
    b154 = T.alloc_local((2,), T.uint32x8)
    b155 = T.alloc_local((2,), T.uint64)
    b156 = T.alloc_local((2,), T.uint64x16)
    b157 = T.alloc_local((2,), T.uint64x2)
    b158 = T.alloc_local((2,), T.uint64x32)
    b159 = T.alloc_local((2,), T.uint64x4)
    b160 = T.alloc_local((2,), T.uint64x64)
    b161 = T.alloc_local((2,), T.uint64x8)
    b162 = T.alloc_local((2,), T.uint8)
    b163 = T.alloc_local((2,), T.uint8x16)
    b164 = T.alloc_local((2,), T.uint8x2)
    b165 = T.alloc_local((2,), T.uint8x32)
    b166 = T.alloc_local((2,), T.uint8x4)
    b167 = T.alloc_local((2,), T.uint8x64)
    b168 = T.alloc_local((2,), T.uint8x8)
