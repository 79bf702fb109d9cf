# verifier-bug: reset_tags forgets the data tags the assertion relies on
# seeded into tests/verifier/clean/tags_doc_example.py
# expect: tag_assert line 15
# cex: reset_tags
# dims: M=256,K=256
@kernel(threads=64)
def tags(A: Tensor[bf16, "M", "K"], Out: Tensor[bf16, "M", "K"], T: const = 32):
    grid(cdiv(M, T), cdiv(K, T))
    r0, c0 = block_id(0) * T, block_id(1) * T
    s = shared(bf16, (T, T))
    copy(A.tile((T, T), (block_id(0), block_id(1))), s, thread_layout((8, 8)))
    barrier()
    reset_tags(s)
    tag(s, lambda i, j: block_id(1), "iter")
    assert_tag(s, lambda i, j: A(r0 + i, c0 + j))
    assert_tag(s, lambda i, j: block_id(1), "iter")
    assert_tag_eq(s, A.tile((T, T), (block_id(0), block_id(1))))
    copy(s, Out.tile((T, T), (block_id(0), block_id(1))), thread_layout((8, 8)))
    reset_tags(s)
