"""TMA descriptors encoded in host code (TIRx's idiom): ``T.stack_alloca("tensormap", 1)`` and
``T.cuda.tensormap_encode_tiled`` before the device entry become a host program that encodes
each descriptor at the call (``tirx.runtime.tma.encode_tiled``) and passes it to the kernel by
value (``const __grid_constant__``). Code generation, NVRTC and the refusals need no GPU; the
GPU run is tests/test_tma_host_encode_gpu.py."""

from __future__ import annotations

import struct

import pytest

import tirx
from tirx.runtime import tma
from tirx.script import tirx as T

SHAPE, BOX = (64, 128), (16, 64)  # rows, cols (outermost first)


def copy_kernel(shape=SHAPE, box=BOX, dtype="float16", nbytes=2, swizzle=0):
    """A box per block, global -> shared -> global through two host-encoded descriptors."""
    rows, cols = shape
    brows, bcols = box
    ops = [cols, rows, cols * nbytes, bcols, brows, 1, 1]
    box_bytes = brows * bcols * nbytes
    grid = (rows // brows) * (cols // bcols)
    per_row = cols // bcols

    @T.function
    def copy(A: T.Tensor(shape, dtype), B: T.Tensor(shape, dtype)):
        a_map: T.let[T.handle("tensormap")] = T.stack_alloca("tensormap", 1)
        T.cuda.tensormap_encode_tiled(a_map, A.data, *ops, descriptor_dtype=dtype, rank=2, swizzle=swizzle)
        b_map: T.let[T.handle("tensormap")] = T.stack_alloca("tensormap", 1)
        T.cuda.tensormap_encode_tiled(b_map, B.data, *ops, descriptor_dtype=dtype, rank=2, swizzle=swizzle)
        T.device_entry(launch=T.cuda.LaunchConfig(grid=grid, block=32))
        bx = T.cuda.block_idx("x")
        tx = T.cuda.thread_idx("x")
        tile = T.alloc_shared((brows * bcols,), dtype, align=1024)
        bar = T.alloc_shared((1,), "uint64", align=8)
        if tx == 0:
            T.ptx.mbarrier.init.shared.b64(bar.ptr_to([0]), T.uint32(1))
            T.ptx.fence.mbarrier_init.release.cluster()
        T.cuda.cta_sync()
        if tx == 0:
            T.ptx.mbarrier.arrive.expect_tx.shared.b64(bar.ptr_to([0]), T.uint32(box_bytes))
            T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"](
                tile.ptr_to([0]), T.reinterpret(T.address_of(a_map), ty="handle"),
                bx % per_row * bcols, bx // per_row * brows, bar.ptr_to([0]),
            )  # fmt: skip
        T.cuda.mbarrier_wait(bar.ptr_to([0]), 0)
        if tx == 0:
            T.ptx["cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"](
                T.reinterpret(T.address_of(b_map), ty="handle"),
                bx % per_row * bcols, bx // per_row * brows, tile.ptr_to([0]),
            )  # fmt: skip
            T.ptx.cp.async_.bulk.commit_group()
            T.ptx.cp.async_.bulk.wait_group(0)

    return copy


def test_host_encoded_descriptors_are_by_value_kernel_parameters(tmp_path, monkeypatch):
    monkeypatch.setenv("TIRX_CACHE_DIR", str(tmp_path))
    k = tirx.compile(copy_kernel(), target="cuda -arch=sm_90a")
    assert isinstance(k, tirx.runtime.host_program.HostProgram)
    src = k.source
    assert "const __grid_constant__ tirx_tensormap a_map_param" in src
    assert "const __grid_constant__ tirx_tensormap b_map_param" in src
    assert k.cubin  # NVRTC compiled it
    # the host encodes both descriptors from the tensors' pointers, then launches once
    host = k.host_source
    assert host.count("_tmap_alloc()") == 2
    assert "_tmap_encode(" in host and "'float16', 2, (128, 64, 256, 64, 16, 1, 1, ), 0, 0, 0, 0, -1)" in host
    assert host.index("_tmap_encode(") < host.index("_launch(")
    # the kernel addresses its shared tile at the alignment the tensor asks (TMA boxes)
    assert "__shared__ __align__(1024)" in src


def test_the_round_trip_keeps_the_host_encoding():
    f = copy_kernel(swizzle=3)
    text = tirx.dumps(f)
    assert 'T.stack_alloca("tensormap", 1)' in text
    assert 'descriptor_dtype="float16", rank=2, swizzle=3)' in text
    tirx.assert_structural_equal(tirx.loads(text), f)


def test_encoding_into_a_tensor_pointer_is_refused_where_it_is_written():
    @T.function
    def bad(A: T.Tensor((64, 64), "float16"), D: T.Tensor((128,), "uint8")):
        T.cuda.tensormap_encode_tiled(
            D.data, A.data, 64, 64, 128, 64, 64, 1, 1, descriptor_dtype="float16", rank=2
        )
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
        D[0] = T.uint8(1)

    with pytest.raises(tirx.DiagnosticError, match=r"test_tma_host_encode\.py:\d+:\d+.*host storage") as e:
        tirx.compile(bad, target="cuda -arch=sm_90a")
    assert "T.stack_alloca" in str(e.value)


def test_encoding_inside_a_kernel_is_refused_by_name():
    @T.function
    def bad(A: T.Tensor((64, 64), "float16")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
        m: T.let[T.handle("tensormap")] = T.stack_alloca("tensormap", 1)
        T.cuda.tensormap_encode_tiled(
            m, A.data, 64, 64, 128, 64, 64, 1, 1, descriptor_dtype="float16", rank=2
        )

    with pytest.raises(tirx.DiagnosticError, match=r"stack_alloca|tensormap_encode_tiled"):
        tirx.compile(bad, target="cuda -arch=sm_90a")


def test_other_stack_arrays_are_not_host_code():
    @T.function
    def bad(A: T.Tensor((64,), "float32")):
        s = T.stack_alloca("shape", 2)
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=32))
        A[0] = T.float32(T.isnullptr(s))

    with pytest.raises(
        tirx.DiagnosticError, match=r"test_tma_host_encode\.py:\d+:\d+.*T\.stack_alloca\('shape'"
    ):
        tirx.compile(bad, target="cuda -arch=sm_90a")


def test_descriptor_dtypes_map_to_tma_types():
    from cuda.bindings import driver as d

    def enum(name: str) -> int:
        return int(getattr(d.CUtensorMapDataType, f"CU_TENSOR_MAP_DATA_TYPE_{name}"))

    assert tma._cu_dtype("float16", -1) == enum("FLOAT16")
    assert tma._cu_dtype("bfloat16", -1) == enum("BFLOAT16")
    assert tma._cu_dtype("int32", -1) == enum("INT32")
    assert tma._cu_dtype("float8_e4m3fn", -1) == enum("UINT8")  # TMA moves the bytes
    assert tma._cu_dtype("int8", -1) == enum("UINT8")
    assert tma._cu_dtype("float32", 11) == 11  # force_cu_dtype (TIRx's tf32) wins
    with pytest.raises(ValueError, match="force_cu_dtype"):
        tma._cu_dtype("float4_e2m1fn", -1)


def test_encode_checks_its_operands_before_the_driver():
    desc = tma.new_descriptor()
    with pytest.raises(ValueError, match="rank 2 takes 7 operands"):
        tma.encode_tiled(desc, 0, "float16", 2, (64, 64, 128))
    with pytest.raises(ValueError, match="a negative operand"):
        tma.encode_tiled(desc, 0, "float16", 1, (-64, 64, 1))
    with pytest.raises(TypeError, match="host storage of 128 bytes"):
        tma.encode_tiled(bytearray(64), 0, "float16", 1, (64, 64, 1))


def test_an_encoding_seen_before_is_copied_not_asked_of_the_driver_again(monkeypatch):
    """``encode_tiled`` is a pure function of its operands: a host program called again on the
    same tensors copies the remembered 128 bytes (no driver call); any other operand encodes."""
    import ctypes

    from tirx.runtime import driver as drv

    calls = []

    def fake_encode(addr, dt, rank, ptr, dims, strides, box, estr, interleave, swizzle, l2, oob):
        calls.append((ptr, tuple(dims[i] for i in range(rank)), swizzle))
        ctypes.memmove(addr, bytes([len(calls) % 256]) * 128, 128)
        return 0

    monkeypatch.setattr(drv, "probe", lambda: (True, ""))
    monkeypatch.setattr(tma, "_libcuda_encode", lambda: fake_encode)
    monkeypatch.setattr(tma, "_ENCODED", type(tma._ENCODED)())
    ops = (64, 64, 128, 64, 64, 1, 1)
    a, b, c = bytearray(128), bytearray(128), bytearray(128)
    tma.encode_tiled(a, 0x1000, "float16", 2, ops)
    tma.encode_tiled(b, 0x1000, "float16", 2, ops)
    assert len(calls) == 1 and a == b == bytes([1]) * 128
    tma.encode_tiled(c, 0x2000, "float16", 2, ops)  # another tensor
    tma.encode_tiled(c, 0x1000, "float16", 2, ops, swizzle=3)  # another option
    assert len(calls) == 3 and c == bytes([3]) * 128
    monkeypatch.setattr(tma, "_ENCODED_MAX", 2)
    tma.encode_tiled(bytearray(128), 0x3000, "float16", 2, ops)  # the oldest (0x1000, no swizzle) goes
    tma.encode_tiled(bytearray(128), 0x1000, "float16", 2, ops)
    assert len(calls) == 5


def test_a_prepared_encoder_sets_the_row_count_per_call_and_per_thread(monkeypatch):
    """``_Encoder`` (the library's descriptors): each call encodes its own row count into its
    own thread's buffer, so calls from several threads (the driver call releases the GIL) never
    see each other's rows or bytes."""
    import ctypes
    import threading
    import time

    from tirx.runtime import driver as drv

    def fake_encode(addr, dt, rank, ptr, dims, strides, box, estr, interleave, swizzle, l2, oob):
        rows = dims[rank - 1]
        time.sleep(0.0005)  # another thread runs here
        ctypes.memmove(addr, struct.pack("<QQ", ptr, rows) * 8, 128)
        return 0

    monkeypatch.setattr(drv, "probe", lambda: (True, ""))
    monkeypatch.setattr(tma, "_libcuda_encode", lambda: fake_encode)
    enc = tma._Encoder(tma.TensorMapPlan("bfloat16", (100, 256), (64, 64), 128))
    assert enc(0x1000) == struct.pack("<QQ", 0x1000, 100) * 8  # the plan's rows
    bad = []

    def worker(t):
        for i in range(40):
            rows = 1000 * t + i + 1
            if enc(0x2000 + t, rows) != struct.pack("<QQ", 0x2000 + t, rows) * 8:
                bad.append((t, i))

    ts = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert bad == []
    assert enc(0x1000) == struct.pack("<QQ", 0x1000, 100) * 8  # without rows: the plan's again
