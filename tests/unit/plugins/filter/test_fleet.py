"""A fleet's clusters in rollout order, and the batches a play's serial takes them in (playbooks/rollout.yml)."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.fleet import fleet_rollout_batches

# A pair, a single node and a four-node cluster through a switch, as an inventory lists them: the pair's worker first.
FLEET = {
    "spark-2": ["spark-1", "spark-2"],
    "spark-1": ["spark-1", "spark-2"],
    "spark-3": ["spark-3"],
    "spark-4": ["spark-4", "spark-5", "spark-6", "spark-7"],
    "spark-5": ["spark-4", "spark-5", "spark-6", "spark-7"],
    "spark-6": ["spark-4", "spark-5", "spark-6", "spark-7"],
    "spark-7": ["spark-4", "spark-5", "spark-6", "spark-7"],
}


def test_clusters_come_in_the_order_their_first_node_is_targeted_each_head_first():
    rollout = fleet_rollout_batches(FLEET, list(FLEET))
    assert rollout["clusters"] == [["spark-1", "spark-2"], ["spark-3"], ["spark-4", "spark-5", "spark-6", "spark-7"]]
    assert rollout["order"] == ["spark-1", "spark-2", "spark-3", "spark-4", "spark-5", "spark-6", "spark-7"]
    assert rollout["batches"] == [2, 1, 4]


def test_a_batch_holds_whole_clusters():
    assert fleet_rollout_batches(FLEET, list(FLEET), 2)["batches"] == [3, 4]
    assert fleet_rollout_batches(FLEET, list(FLEET), 5)["batches"] == [7]


def test_nodes_without_cluster_hosts_are_one_cluster_of_every_target():
    rollout = fleet_rollout_batches({"spark-1": None, "spark-2": None}, ["spark-1", "spark-2"])
    assert (rollout["clusters"], rollout["batches"]) == ([["spark-1", "spark-2"]], [2])


@pytest.mark.parametrize(
    ("cluster_hosts", "targets", "batch", "message"),
    [
        (
            {"spark-1": ["spark-1", "spark-2"], "spark-2": ["spark-2", "spark-3"], "spark-3": ["spark-2", "spark-3"]},
            ["spark-1", "spark-2", "spark-3"],
            1,
            "spark-2 is in two clusters, ['spark-1', 'spark-2'] and ['spark-2', 'spark-3']",
        ),
        (
            {"spark-1": ["spark-2"], "spark-2": ["spark-2"]},
            ["spark-1", "spark-2"],
            1,
            "sparkinfer_cluster_hosts of spark-1 is ['spark-2'], which does not hold spark-1",
        ),
        ({"spark-1": "spark-1"}, ["spark-1"], 1, "sparkinfer_cluster_hosts of spark-1 must be a list of host names, got 'spark-1'"),
        ({"spark-1": ["spark-1", "spark-2"]}, ["spark-1"], 1, "the cluster of spark-1 has nodes the run does not target (spark-2)"),
        ({"spark-1": None}, ["spark-1"], 0, "sparkinfer_rollout_clusters_per_batch must be a whole number of clusters, 1 or more, got 0"),
        ({"spark-1": None}, ["spark-1"], True, "sparkinfer_rollout_clusters_per_batch must be a whole number of clusters, 1 or more, got True"),
    ],
)
def test_what_cannot_be_rolled_out_cluster_by_cluster_is_named(cluster_hosts, targets, batch, message):
    with pytest.raises(AnsibleFilterError, match=r"^fleet_rollout_batches: ") as error:
        fleet_rollout_batches(cluster_hosts, targets, batch)
    assert message in str(error.value)
