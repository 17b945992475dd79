"""A fleet's clusters in rollout order, and the batches a play's serial takes them in (playbooks/rollout.yml)."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.fleet import fleet_rollout_batches, fleet_rollout_clusters_per_batch, fleet_rollout_unreachable

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
    # Each batch ends with its reporter, a host of the admin box: it counts in the batch.
    assert rollout["order"] == [
        "spark-1",
        "spark-2",
        "sparkinfer-rollout-batch-1",
        "spark-3",
        "sparkinfer-rollout-batch-2",
        "spark-4",
        "spark-5",
        "spark-6",
        "spark-7",
        "sparkinfer-rollout-batch-3",
    ]
    assert rollout["batches"] == [3, 2, 5]
    assert rollout["reporters"] == ["sparkinfer-rollout-batch-1", "sparkinfer-rollout-batch-2", "sparkinfer-rollout-batch-3"]
    assert rollout["batch_nodes"]["sparkinfer-rollout-batch-1"] == ["spark-1", "spark-2"]


def test_a_batch_holds_whole_clusters():
    assert fleet_rollout_batches(FLEET, list(FLEET), 2)["batches"] == [4, 5]
    assert fleet_rollout_batches(FLEET, list(FLEET), 5)["batches"] == [8]


def test_nodes_without_cluster_hosts_are_one_cluster_of_every_target():
    rollout = fleet_rollout_batches({"spark-1": None, "spark-2": None}, ["spark-1", "spark-2"])
    assert (rollout["clusters"], rollout["batches"]) == ([["spark-1", "spark-2"]], [3])


def test_every_node_answering_leaves_the_reporter_nothing_to_say():
    rollout = fleet_rollout_batches(FLEET, list(FLEET))
    assert fleet_rollout_unreachable(rollout, "sparkinfer-rollout-batch-1", ["spark-1", "spark-2"], {"spark-1": "serve"}) == ""


def test_a_head_lost_while_serving_is_named_with_its_stage_and_where_the_fleet_stands():
    rollout = fleet_rollout_batches(FLEET, list(FLEET))
    said = fleet_rollout_unreachable(rollout, "sparkinfer-rollout-batch-2", [], {"spark-3": "serve"})
    assert said == (
        "The rollout stopped at the cluster of spark-3 (spark-3): spark-3 stopped answering at the serve stage, so nothing could be "
        "put back or checked there: its server may have been stopped for the relaunch, so it may be down. Changed and serving the "
        "change: spark-1. Not touched: spark-4. Once spark-3 answers again, run doctor.yml to see what it serves, then rollout.yml "
        "again: the clusters already changed change nothing."
    )


@pytest.mark.parametrize(
    ("stage", "state"),
    [
        ("", "before its change began, so nothing could be put back or checked there: nothing of it had been changed yet."),
        ("image", "at the image stage, so nothing could be put back or checked there: its server had not been stopped"),
        ("cluster", "at the cluster stage, so nothing could be put back or checked there: its server may have been stopped (Ray restarts"),
        ("benchmark", "at the benchmark stage, so nothing could be put back or checked there: its new server had passed its gate"),
    ],
)
def test_the_stage_of_the_first_silent_node_says_what_became_of_the_server(stage, state):
    rollout = fleet_rollout_batches(FLEET, list(FLEET))
    said = fleet_rollout_unreachable(rollout, "sparkinfer-rollout-batch-1", ["spark-1"], {"spark-2": stage})
    assert said.startswith(f"The rollout stopped at the cluster of spark-1 (spark-1, spark-2): spark-2 stopped answering {state}"), said


def test_in_a_batch_of_clusters_the_failed_and_the_silent_ones_are_not_counted_as_changed():
    rollout = fleet_rollout_batches(FLEET, list(FLEET), 3)
    answering = ["spark-1", "spark-2", "spark-4", "spark-5", "spark-6", "spark-7"]
    said = fleet_rollout_unreachable(rollout, "sparkinfer-rollout-batch-1", answering, {"spark-3": "validate"}, ["spark-4"])
    assert "Changed and serving the change: spark-1. Not touched: none." in said
    with pytest.raises(AnsibleFilterError, match="expected fleet_rollout_batches' result with the reporter 'spark-1'"):
        fleet_rollout_unreachable(rollout, "spark-1", answering, {})


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


def test_the_batch_size_is_the_admin_boxs_else_the_one_the_nodes_share_else_1():
    # group_vars/all or -e reach the admin box (and the nodes); a fleet's own group reaches the nodes only.
    assert fleet_rollout_clusters_per_batch(3, {"spark-1": 2, "spark-3": 2}) == 3
    assert fleet_rollout_clusters_per_batch(None, {"spark-1": 2, "spark-3": "2", "spark-4": None}) == 2
    assert fleet_rollout_clusters_per_batch(None, {"spark-1": None, "spark-3": None}) == 1
    assert fleet_rollout_clusters_per_batch(None, {}) == 1


def test_nodes_given_different_batch_sizes_are_refused_naming_each_value_and_its_nodes():
    with pytest.raises(AnsibleFilterError) as error:
        fleet_rollout_clusters_per_batch(None, {"spark-1": 2, "spark-2": 2, "spark-3": 1, "spark-4": None})
    assert str(error.value) == (
        "fleet_rollout_clusters_per_batch: sparkinfer_rollout_clusters_per_batch differs between the nodes (2 on spark-1, spark-2; 1 on "
        "spark-3): a rollout's batches are the fleet's, so set it once (group_vars/all, the fleet's group, or -e)"
    )
    with pytest.raises(AnsibleFilterError, match=r"^fleet_rollout_clusters_per_batch: expected a mapping of host to its value, got list$"):
        fleet_rollout_clusters_per_batch(None, [])
