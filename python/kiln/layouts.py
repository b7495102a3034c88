"""Memory layouts of the values a partitioned graph passes around.

Regions write their results in whatever order of dimensions their readers
want; library convolutions (cuDNN, oneDNN) follow their input's layout. On
GPUs convolutions are fastest channels-last, so images that pass between
regions and convolutions are NHWC buffers, in inference graphs and in
training graphs alike: a forward's saved images stay NHWC (the backward
graph is told their strides), and a backward's gradients reach
``convolution_backward`` NHWC. This module plans those layouts and predicts
the one every value has when the graph runs, which regions read without a
copy.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any, Collection, Dict, List, Mapping, Optional, Sequence, Set, Tuple

import torch
import torch.fx

aten = torch.ops.aten

NCHW_TO_NHWC = (0, 2, 3, 1)

# Library convolutions and their image operands, the one whose layout the
# library follows first (the input: PyTorch converts a forward's weight, or
# a backward's gradient, to the input's layout).
_IMAGE_OPERANDS = {aten.convolution.default: (0,), aten.convolution_backward.default: (1, 0)}

# Views that PyTorch runs between regions and that keep their operand's
# layout: AOTAutograd saves a forward's `alias` of an activation beside it.
_LAYOUT_KEEPING_VIEWS = {aten.alias.default, aten.detach.default}


@dataclass
class ChannelsLastPlan:
    """Which values are NHWC when the graph runs, and what makes them so."""

    # Region results written, and region inputs read, as NHWC buffers
    # (channels-last tensors to PyTorch).
    nhwc: Set[torch.fx.Node] = field(default_factory=set)
    # Convolutions given a channels-last copy of an operand first, with the
    # operand's position.
    converted: List[Tuple[torch.fx.Node, int]] = field(default_factory=list)


def is_image(value: Any) -> bool:
    """Whether `value` is a 4-d tensor: an image, or what is kept per pixel
    of one (a max pooling's indices, a mask)."""
    return isinstance(value, torch.Tensor) and value.dim() == 4


def is_channels_last(value: Any) -> bool:
    """Whether a 4-d tensor is channels-last and not also contiguous (as
    one with a single channel, or a single pixel, is both)."""
    return is_image(value) and value.is_contiguous(memory_format=torch.channels_last) \
        and not value.is_contiguous()


def _image_results(node: torch.fx.Node) -> List[torch.fx.Node]:
    """The images a library convolution computes: a forward's result, a
    backward's input gradient (its weight gradient is no image that regions
    exchange)."""
    if node.target is aten.convolution.default:
        return [node]
    return [user for user in node.users
            if user.target is operator.getitem and user.args[1] == 0]


def plan_channels_last(gm: torch.fx.GraphModule, regions: Sequence[Sequence[torch.fx.Node]],
                       library: Collection[torch.fx.Node],
                       values: Mapping[torch.fx.Node, Any],
                       kept_outputs: Collection[torch.fx.Node]) -> ChannelsLastPlan:
    """The 4-d values that pass between regions and library convolutions
    (forward and backward) in NHWC memory, and the convolutions whose input
    is converted to it first:

    * a convolution takes part when only regions and convolutions that take
      part read the images it computes (or aliases of them that only such
      readers read), and none is one of `kept_outputs` (the graph's results
      that keep PyTorch's layout);
    * a region's result that only regions and such convolutions read is an
      NHWC buffer (viewed with channels-last strides in PyTorch);
    * the input of such a convolution that comes otherwise (the model's
      image, say) is converted first, so that the library runs channels-last
      and its results are channels-last too; one already channels-last (a
      saved image the forward wrote so) is not;
    * a region that reads an NHWC buffer, or an input that comes
      channels-last, writes its images that only regions read (or such
      convolutions) as NHWC buffers.

    Other PyTorch ops (a view, say) keep the layout PyTorch gives them."""
    in_region = {n for nodes in regions for n in nodes}
    convolutions = [n for n in gm.graph.nodes
                    if n in library and n.target in _IMAGE_OPERANDS]
    taking_part: Set[torch.fx.Node] = set()

    def images_read(convolution: torch.fx.Node) -> List[Any]:
        return [convolution.args[i] for i in _IMAGE_OPERANDS[convolution.target]]

    def only_taking_part_read(node: torch.fx.Node) -> bool:
        return node not in kept_outputs and all(
            user.op == "output" or user in in_region or
            (user in taking_part and node in images_read(user)) or
            (user.target in _LAYOUT_KEEPING_VIEWS and only_taking_part_read(user))
            for user in node.users)

    for node in reversed(convolutions):  # Readers first.
        first = node.args[_IMAGE_OPERANDS[node.target][0]]
        if is_image(values.get(first)) and \
                all(only_taking_part_read(r) for r in _image_results(node)):
            taking_part.add(node)

    plan = ChannelsLastPlan()
    computed: Set[torch.fx.Node] = set()  # NHWC results of convolutions
    for node in convolutions:
        if node not in taking_part:
            continue
        for position in _IMAGE_OPERANDS[node.target]:
            source = node.args[position]
            if source in in_region and only_taking_part_read(source):
                plan.nhwc.add(source)
            elif position == _IMAGE_OPERANDS[node.target][0] and source not in computed \
                    and (source in in_region or not is_channels_last(values.get(source))):
                # (A region writes its other results contiguous.)
                plan.converted.append((node, position))
        for result in _image_results(node):
            computed.add(result)
            if any(user in in_region for user in result.users):
                plan.nhwc.add(result)
    # A region that reads an NHWC buffer (or a channels-last input: a
    # backward's saved images) writes the images that only regions read as
    # NHWC too, so that neither it nor its readers transpose them (the
    # product of a squeeze-and-excitation gate and the features it pooled; a
    # residual block's gradient on its way to the next region). Regions come
    # in graph order: this reaches along chains.
    for nodes in regions:
        members = set(nodes)
        reads_nhwc = any(arg in plan.nhwc or (arg not in in_region and
                                              is_channels_last(values.get(arg)))
                         for node in nodes for arg in node.all_input_nodes
                         if arg not in members)
        if not reads_nhwc:
            continue
        for node in nodes:
            if is_image(values.get(node)) and node.users and \
                    any(user not in members for user in node.users) and \
                    only_taking_part_read(node):
                plan.nhwc.add(node)
    return plan


def running_layouts(regions: Sequence[Sequence[torch.fx.Node]], plan: ChannelsLastPlan
                    ) -> Dict[torch.fx.Node, torch.memory_format]:
    """The memory format of each region result read outside its region:
    contiguous, or channels-last for an NHWC buffer. (The layout of other
    values follows from these and the converted operands.)"""
    layouts = {}
    for nodes in regions:
        members = set(nodes)
        for node in nodes:
            if any(user not in members for user in node.users):
                layouts[node] = torch.channels_last if node in plan.nhwc \
                    else torch.contiguous_format
    return layouts


def convert_operands(gm: torch.fx.GraphModule,
                     converted: Sequence[Tuple[torch.fx.Node, int]]) -> None:
    """Gives each convolution of `converted` a channels-last copy of the
    operand at the position given."""
    for node, position in converted:
        with gm.graph.inserting_before(node):
            copy = gm.graph.call_function(aten.clone.default, (node.args[position],),
                                          {"memory_format": torch.channels_last})
        args = list(node.args)
        args[position] = copy
        node.args = tuple(args)


def convolution_gradients_as_run(args: Sequence[Any], result: Any) -> Any:
    """`result` of ``convolution_backward`` laid out as cuDNN and oneDNN
    write it: channels-last where the input or the weight is (PyTorch's
    meta function gives contiguous gradients whatever the layouts)."""
    if not isinstance(result, (tuple, list)) or \
            not any(is_channels_last(a) for a in args[1:3]):
        return result
    return type(result)(
        r.contiguous(memory_format=torch.channels_last) if is_image(r) else r
        for r in result)


def dense_order(value: Any) -> Optional[List[int]]:
    """The order of dimensions in which a tensor that is not contiguous is
    dense (``value.permute(order)`` contiguous), or None: a result of
    cuDNN's attention is [batch, heads, sequence, head size] over memory in
    [batch, sequence, heads, head size] order. Only for static sizes."""
    if not isinstance(value, torch.Tensor) or value.dim() < 2 or \
            not all(isinstance(x, int) for x in (*value.shape, *value.stride())) or \
            value.is_contiguous():
        return None
    order = sorted(range(value.dim()), key=lambda d: (-value.stride(d), d))
    return order if value.permute(order).is_contiguous() else None


def static_strides(value: Any) -> Optional[Tuple[int, ...]]:
    """A tensor's strides, where all are numbers (not symbols); else None."""
    if not isinstance(value, torch.Tensor):
        return None
    strides = tuple(value.stride())
    return strides if all(type(s) is int for s in strides) else None


# Ops that read their operand's storage rather than its values: given a
# tensor laid out otherwise than traced, they would read other elements.
_STORAGE_VIEWS = {aten.as_strided.default}


def copy_restrided_storage_reads(gm: torch.fx.GraphModule,
                                 example_inputs: Sequence[Any]) -> bool:
    """Gives each op that reads a graph input's storage (`as_strided`) a
    contiguous copy of the input where it comes laid out otherwise than it
    was traced, contiguous (a backward graph's saved image that the forward
    wrote channels-last, and told AOTAutograd so): the op then reads the
    elements that eager's did. Returns whether it changed the graph."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    changed = False
    for node, value in zip(placeholders, example_inputs):
        traced = node.meta.get("val")
        if not isinstance(traced, torch.Tensor) or not isinstance(value, torch.Tensor):
            continue
        strides = static_strides(value)
        if strides is None or strides == static_strides(traced) or \
                not traced.is_contiguous():
            continue
        for user in list(node.users):
            if user.target in _STORAGE_VIEWS and user.args[0] is node:
                with gm.graph.inserting_before(user):
                    copy = gm.graph.call_function(
                        aten.clone.default, (node,),
                        {"memory_format": torch.contiguous_format})
                user.replace_input_with(node, copy)
                changed = True
    return changed
