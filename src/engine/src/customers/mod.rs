pub(crate) mod erase;
