# TIRx's launch options beyond the shape: packed as device-entry launch values in TIRx's order.
from tirx.script import tirx as T


@T.function
def f(A: T.Tensor((8,), T.float32), ev: T.handle):
    T.device_entry(
        launch=T.cuda.LaunchConfig(
            grid=4,
            block=32,
            cooperative=True,
            priority=2,
            mem_sync_domain="remote",
            mem_sync_domain_map=T.cuda.MemSyncDomainMap(default=1, remote=0),
            access_policy_window=T.cuda.AccessPolicyWindow(base_ptr=A.data, num_bytes=32, hit_ratio=0.5),
            programmatic_stream_serialization=True,
            programmatic_event=T.cuda.ProgrammaticEvent(event=ev, trigger_at_block_start=True),
            launch_completion_event=T.cuda.LaunchCompletionEvent(event=ev),
        )
    )
    A[0] = 1.0
    T.cuda.wgmma.noop_barrier(A[1])
