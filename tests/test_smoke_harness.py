from tests.fakes.cluster import FakeCluster, node


def test_probe_against_fakes(cluster: FakeCluster) -> None:
    cluster.nodes(node("a", "4", "16Gi")).release_absent()
    doc = cluster.run_json("probe")
    assert doc["training"]["size"] == "cpu=3,memory=13Gi"
    assert len(cluster.calls("kubectl")) == 1
    assert len(cluster.calls("helm")) == 1
